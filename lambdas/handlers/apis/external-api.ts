import { createHttpApi, type HttpApiDependencies, type HttpLambdaHandler } from '../http/http-api.js';
import { createExternalRoutes } from '../routes/external-routes.js';

/** The `external` API Lambda: the approval API of agents that run elsewhere (machine clients only). */
export function createExternalApi(
  dependencies: Parameters<typeof createExternalRoutes>[0] & HttpApiDependencies,
): HttpLambdaHandler {
  return createHttpApi('api-external', createExternalRoutes(dependencies), dependencies);
}
