import * as z from 'zod/mini';
import { CountersignError } from '../../core/errors.js';
import { TEXTS } from '../../core/texts.js';

const runIdPattern = /^[A-Za-z0-9-]{1,100}$/;

/** The run id of a `/runs/{id}` route; a malformed id gets the same 404 as an unknown run. */
export function runIdOf(request: { pathParameters: Record<string, string | undefined> }): string {
  const runId = request.pathParameters.id ?? '';
  if (!runIdPattern.test(runId)) throw new CountersignError('not-found', TEXTS.runNotFound);
  return runId;
}

/** Every admin list is paged: `?limit=` (1 to 100, default 100) and the opaque `cursor` of the last page. */
export const ADMIN_PAGE_SIZE_MAX = 100;
export const adminListQuerySchema = z.strictObject({
  limit: z._default(
    z.coerce.number().check(z.int(), z.gte(1), z.lte(ADMIN_PAGE_SIZE_MAX)),
    ADMIN_PAGE_SIZE_MAX,
  ),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(2000))),
});
