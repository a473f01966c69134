import { createHttpApi, type HttpLambdaHandler } from '../http/http-api.js';
import { createCallRoutes } from '../routes/call-routes.js';
import { createInboxRoutes } from '../routes/inbox-routes.js';
import type { ApiEdgeDependencies } from './edge.js';

/**
 * The `inbox` API Lambda: GET /inbox, GET / (the page shell, which carries no data, public in the
 * manifest), and GET /runs/{id}/calls/{index} (the whole arguments a card excerpts: the same
 * reader's reads).
 */
export function createInboxApi(
  dependencies: Parameters<typeof createInboxRoutes>[0] &
    Parameters<typeof createCallRoutes>[0] &
    ApiEdgeDependencies,
): HttpLambdaHandler {
  return createHttpApi(
    'api-inbox',
    { ...createInboxRoutes(dependencies), ...createCallRoutes(dependencies) },
    dependencies,
  );
}
