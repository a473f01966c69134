import { createRunsApi } from './apis/runs-api.js';
import { awsBaseDependencies, awsExecutions, awsSealer, awsTools } from './aws-dependencies.js';
import type { HttpLambdaHandler } from './http/http-route.js';

let api: HttpLambdaHandler | undefined;

/** Lambda entry point of the HTTP API's `runs` routes: the sealer, the tools and Step Functions, no model. */
export const handler: HttpLambdaHandler = (event) => {
  api ??= createRunsApi({
    ...awsBaseDependencies(),
    sealer: awsSealer(),
    tools: awsTools(),
    executions: awsExecutions(),
  });
  return api(event);
};
