import { createHttpHandler, type HttpLambdaHandler } from '../http/http-route.js';
import { createGenerateRoutes } from '../routes/generate-routes.js';
import type { ApiEdgeDependencies } from './edge.js';

/** The `generate` API Lambda: POST /configurations/{id}/complete and /translate. */
export function createGenerateApi(
  dependencies: Parameters<typeof createGenerateRoutes>[0] & ApiEdgeDependencies,
): HttpLambdaHandler {
  return createHttpHandler(createGenerateRoutes(dependencies), dependencies);
}
