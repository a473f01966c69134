import { RUN_ID_PATTERN } from '../../contract/common-schemas.js';
import { CountersignError } from '../../core/errors.js';
import { TEXTS } from '../../core/texts.js';

/** The run id of a `/runs/{id}` route; a malformed id gets the same 404 as an unknown run. */
export function runIdOf(request: { pathParameters: Record<string, string | undefined> }): string {
  const runId = request.pathParameters.id ?? '';
  if (!RUN_ID_PATTERN.test(runId)) throw new CountersignError('not-found', TEXTS.runNotFound);
  return runId;
}
