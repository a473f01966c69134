import { readPendingCall } from '../../core/approvals/read-pending-call.js';
import type { InboxDependencies } from '../../core/run-dependencies.js';
import type { RouteImplementations } from '../http/http-api.js';
import { renderFullArguments } from '../http/render-arguments.js';

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
        const { id, index } = request.path;
        const call = await readPendingCall(dependencies, request.principal, id, Number(index));
        if (request.mediaType === 'text/html') return { statusCode: 200, html: renderFullArguments(call) };
        return { statusCode: 200, json: call };
      },
    },
  };
}
