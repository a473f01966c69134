import { createHttpHandler, type HttpLambdaHandler } from '../http/http-route.js';
import { createCallRoutes } from '../routes/call-routes.js';
import { createInboxRoutes } from '../routes/inbox-routes.js';
import type { ApiEdgeDependencies } from './edge.js';

/**
 * The `inbox` API Lambda: GET /inbox, GET / (the page shell, which carries no data), and
 * GET /runs/{id}/calls/{index} (the whole arguments a card excerpts: the same reader's reads).
 */
export function createInboxApi(
  dependencies: Parameters<typeof createInboxRoutes>[0] & ApiEdgeDependencies,
): HttpLambdaHandler {
  return createHttpHandler(
    { ...createInboxRoutes(dependencies), ...createCallRoutes(dependencies) },
    dependencies,
    { publicRoutes: ['GET /'] },
  );
}
