import type { AwaitExternalAnswerDependencies } from '../../core/external-runs/await-external-answer.js';
import type { SubmitExternalRunDependencies } from '../../core/external-runs/submit-external-run.js';
import { createHttpApi, type HttpApiDependencies, type HttpLambdaHandler } from '../http/http-api.js';
import { createExternalRoutes } from '../routes/external-routes.js';

/** The `external` API Lambda: the approval API of agents that run elsewhere (machine clients only). */
export function createExternalApi(
  dependencies: SubmitExternalRunDependencies & AwaitExternalAnswerDependencies & HttpApiDependencies,
): HttpLambdaHandler {
  return createHttpApi('api-external', createExternalRoutes(dependencies), dependencies);
}
