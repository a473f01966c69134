import type { GenerationDependencies } from '../../core/generation/generate-text.js';
import { createHttpApi, type HttpApiDependencies, type HttpLambdaHandler } from '../http/http-api.js';
import { createGenerateRoutes } from '../routes/generate-routes.js';

/** The `generate` API Lambda: POST /configurations/{id}/complete and /translate. */
export function createGenerateApi(
  dependencies: GenerationDependencies & HttpApiDependencies,
): HttpLambdaHandler {
  return createHttpApi('api-generate', createGenerateRoutes(dependencies), dependencies);
}
