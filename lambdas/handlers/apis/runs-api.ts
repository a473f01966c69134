import { createHttpApi, type HttpApiDependencies, type HttpLambdaHandler } from '../http/http-api.js';
import { createRunsRoutes } from '../routes/runs-routes.js';

/** The `runs` API Lambda: POST /runs, GET /runs/{id} and POST /runs/{id}/cancel. */
export function createRunsApi(
  dependencies: Parameters<typeof createRunsRoutes>[0] & HttpApiDependencies,
): HttpLambdaHandler {
  return createHttpApi('api-runs', createRunsRoutes(dependencies), dependencies);
}
