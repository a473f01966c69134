import { createInboxApi } from './apis/inbox-api.js';
import { awsBaseDependencies, awsExecutions, awsSealer, awsTools } from './aws-dependencies.js';
import type { HttpLambdaHandler } from './http/http-route.js';

let api: HttpLambdaHandler | undefined;

/**
 * Lambda entry point of the HTTP API's `inbox` routes: the sealer and the tools (read gates), no
 * model; Step Functions only to stop the run of a card that cannot be opened.
 */
export const handler: HttpLambdaHandler = (event) => {
  api ??= createInboxApi({
    ...awsBaseDependencies(),
    sealer: awsSealer(),
    tools: awsTools(),
    executions: awsExecutions(),
  });
  return api(event);
};
