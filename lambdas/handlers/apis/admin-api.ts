import { createHttpHandler, type HttpLambdaHandler } from '../http/http-route.js';
import { createAdminRoutes } from '../routes/admin-routes.js';
import type { ApiEdgeDependencies } from './edge.js';

/** The `admin` API Lambda: ANY /admin/{proxy+}. */
export function createAdminApi(
  dependencies: Parameters<typeof createAdminRoutes>[0] & ApiEdgeDependencies,
): HttpLambdaHandler {
  return createHttpHandler(createAdminRoutes(dependencies), dependencies);
}
