import { createDecisionApi } from './apis/decision-api.js';
import { awsAnnouncingRuns } from './composition/aws-announcing-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsExecutions } from './composition/aws-executions.js';
import { awsSigningReceipts } from './composition/aws-receipts.js';
import { awsSealer } from './composition/aws-sealer.js';
import { awsTools } from './composition/aws-tools.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { HttpLambdaHandler } from './http/http-api.js';

/**
 * Lambda entry point of the HTTP API's `decision` route: the sealer, Step Functions, the tools
 * (which calls would run; the `record` decision gate asks each write tool's record check) and the
 * receipt signer (KMS, the receipt key), no model.
 */
export const handler: HttpLambdaHandler = composeOnFirstInvocation(() =>
  createDecisionApi({
    ...awsBaseDependencies(),
    // A card it closes is announced (`Card Closed`): the channels update their messages.
    runs: awsAnnouncingRuns(),
    sealer: awsSealer(),
    executions: awsExecutions(),
    tools: awsTools(),
    receipts: awsSigningReceipts(),
  }),
);
