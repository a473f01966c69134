import { CALL_INDEX_PATTERN } from '../../contract/common-schemas.js';
import { readPendingCall } from '../../core/approvals/read-pending-call.js';
import { CountersignError } from '../../core/errors.js';
import type { InboxDependencies } from '../../core/run-dependencies.js';
import { TEXTS } from '../../core/texts.js';
import type { HttpRequest, RouteImplementations } from '../http/http-api.js';
import { renderFullArguments } from '../http/render-arguments.js';
import { runIdOf } from './request-parsing.js';

/**
 * GET /runs/{id}/calls/{index}: the whole arguments of a call whose card shows an excerpt, as
 * JSON, or for the inbox page (`Accept: text/html`) as the escaped block that replaces the excerpt.
 */
export function createCallRoutes(
  dependencies: InboxDependencies,
): Pick<RouteImplementations<'api-inbox'>, 'getCall'> {
  return {
    getCall: {
      handle: async (request) => {
        const runId = runIdOf(request);
        const call = await readPendingCall(dependencies, request.principal, runId, callIndexOf(request));
        if (request.mediaType === 'text/html') return { statusCode: 200, html: renderFullArguments(call) };
        return { statusCode: 200, json: call };
      },
    },
  };
}

function callIndexOf(request: Pick<HttpRequest, 'pathParameters'>): number {
  const index = request.pathParameters.index ?? '';
  if (!CALL_INDEX_PATTERN.test(index)) {
    throw new CountersignError('bad-request', TEXTS.callIndexInvalid, { field: 'index' });
  }
  return Number(index);
}
