import { createSlackInteractionsHandler } from './channels/slack-interactions-route.js';
import { awsAnnouncingRuns } from './composition/aws-announcing-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsExecutions } from './composition/aws-executions.js';
import { awsSigningReceipts } from './composition/aws-receipts.js';
import { awsSealer } from './composition/aws-sealer.js';
import { awsSlackChannel, awsSlackInteractionParts } from './composition/aws-slack.js';
import { awsTools } from './composition/aws-tools.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { HttpLambdaHandler } from './http/http-api.js';

/**
 * Lambda entry point of POST /integrations/slack/interactions: the decision's dependencies (the
 * sealer, Step Functions, the tools, the receipt signer), the Slack channel, its used signatures
 * and its signing secret.
 */
export const handler: HttpLambdaHandler = composeOnFirstInvocation(() =>
  createSlackInteractionsHandler({
    ...awsBaseDependencies(),
    // A card it closes is announced (`Card Closed`): the channels update their messages.
    runs: awsAnnouncingRuns(),
    sealer: awsSealer(),
    executions: awsExecutions(),
    tools: awsTools(),
    receipts: awsSigningReceipts(),
    slack: awsSlackChannel(),
    ...awsSlackInteractionParts(),
  }),
);
