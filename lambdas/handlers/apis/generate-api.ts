import { createHttpApi, type HttpApiDependencies, type HttpLambdaHandler } from '../http/http-api.js';
import { createGenerateRoutes } from '../routes/generate-routes.js';

/** The `generate` API Lambda: POST /configurations/{id}/complete and /translate. */
export function createGenerateApi(
  dependencies: Parameters<typeof createGenerateRoutes>[0] & HttpApiDependencies,
): HttpLambdaHandler {
  return createHttpApi('api-generate', createGenerateRoutes(dependencies), dependencies);
}
