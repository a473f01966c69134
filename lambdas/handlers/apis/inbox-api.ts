import { createHttpHandler, type HttpLambdaHandler } from '../http/http-route.js';
import { createInboxRoutes } from '../routes/inbox-routes.js';
import type { ApiEdgeDependencies } from './edge.js';

/** The `inbox` API Lambda: GET /inbox, and GET / (the page shell, which carries no data). */
export function createInboxApi(
  dependencies: Parameters<typeof createInboxRoutes>[0] & ApiEdgeDependencies,
): HttpLambdaHandler {
  return createHttpHandler(createInboxRoutes(dependencies), dependencies, { publicRoutes: ['GET /'] });
}
