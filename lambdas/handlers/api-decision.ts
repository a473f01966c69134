import { createDecisionApi } from './apis/decision-api.js';
import { awsBaseDependencies, awsExecutions, awsSealer, awsTools } from './aws-dependencies.js';
import type { HttpLambdaHandler } from './http/http-route.js';

let api: HttpLambdaHandler | undefined;

/**
 * Lambda entry point of the HTTP API's `decision` route: the sealer, Step Functions and the
 * tools (which calls would run; the `record` decision gate asks each write tool's record check), no model.
 */
export const handler: HttpLambdaHandler = (event) => {
  api ??= createDecisionApi({
    ...awsBaseDependencies(),
    sealer: awsSealer(),
    executions: awsExecutions(),
    tools: awsTools(),
  });
  return api(event);
};
