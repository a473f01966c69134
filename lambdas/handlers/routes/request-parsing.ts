import * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import { CountersignError } from '../../core/errors.js';
import { TEXTS } from '../../core/texts.js';
import { badRequestFrom } from '../http/http-errors.js';
import type { HttpRequest } from '../http/http-route.js';

/** Parses client input with a schema; a failure is a 400 naming the first offending field. */
export function parseInput<Schema extends zc.$ZodType>(
  schema: Schema,
  value: unknown,
  prefix: string,
): z.infer<Schema> {
  if (value === undefined && prefix === 'body') {
    throw new CountersignError('bad-request', 'body: a JSON object is required.', { field: 'body' });
  }
  const parsed = z.safeParse(schema, value ?? {});
  if (!parsed.success) throw badRequestFrom(parsed.error, prefix);
  return parsed.data;
}

const runIdPattern = /^[A-Za-z0-9-]{1,100}$/;

/** The run id of a `/runs/{id}` route; a malformed id gets the same 404 as an unknown run. */
export function runIdOf(request: HttpRequest): string {
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
