import { createInboxApi } from './apis/inbox-api.js';
import { awsAnnouncingRuns } from './composition/aws-announcing-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsExecutionsOnDemand } from './composition/aws-executions-on-demand.js';
import { awsSealer } from './composition/aws-sealer.js';
import { awsTools } from './composition/aws-tools.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import { lambdaInboxPage } from './config.js';
import type { HttpLambdaHandler } from './http/http-api.js';

/**
 * Lambda entry point of the HTTP API's `inbox` routes: the sealer and the tools (read gates), no
 * model; Step Functions only to stop the run of a card that cannot be opened.
 */
export const handler: HttpLambdaHandler = composeOnFirstInvocation(() =>
  createInboxApi({
    ...awsBaseDependencies(),
    // A card it closes is announced (`Card Closed`): the channels update their messages.
    runs: awsAnnouncingRuns(),
    sealer: awsSealer(),
    tools: awsTools(),
    executions: awsExecutionsOnDemand(),
    page: lambdaInboxPage(),
  }),
);
