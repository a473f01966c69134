import type { DecisionDependencies } from '../../core/runs/run-dependencies.js';
import { createHttpApi, type HttpApiDependencies, type HttpLambdaHandler } from '../http/http-api.js';
import { createDecisionRoutes } from '../routes/decision-routes.js';

/** The `decision` API Lambda: POST /runs/{id}/decision, the only route that resumes a run. */
export function createDecisionApi(
  dependencies: DecisionDependencies & HttpApiDependencies,
): HttpLambdaHandler {
  return createHttpApi('api-decision', createDecisionRoutes(dependencies), dependencies);
}
