import { createRunsApi } from './apis/runs-api.js';
import { awsAnnouncingRuns } from './composition/aws-announcing-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsExecutions } from './composition/aws-executions.js';
import { awsReceipts } from './composition/aws-receipts.js';
import { awsSealer } from './composition/aws-sealer.js';
import { awsTools } from './composition/aws-tools.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { HttpLambdaHandler } from './http/http-api.js';

/** Lambda entry point of the HTTP API's `runs` routes: the sealer, the tools and Step Functions, no model. */
export const handler: HttpLambdaHandler = composeOnFirstInvocation(() =>
  createRunsApi({
    ...awsBaseDependencies(),
    // A card it closes is announced (`Card Closed`): the channels update their messages.
    runs: awsAnnouncingRuns(),
    sealer: awsSealer(),
    tools: awsTools(),
    executions: awsExecutions(),
    receipts: awsReceipts(),
  }),
);
