import { createDecisionApi } from './apis/decision-api.js';
import { awsBaseDependencies, awsExecutions, awsSealer } from './aws-dependencies.js';
import type { HttpLambdaHandler } from './http/http-route.js';

let api: HttpLambdaHandler | undefined;

/** Lambda entry point of the HTTP API's `decision` route: the sealer and Step Functions, no tools, no model. */
export const handler: HttpLambdaHandler = (event) => {
  api ??= createDecisionApi({ ...awsBaseDependencies(), sealer: awsSealer(), executions: awsExecutions() });
  return api(event);
};
