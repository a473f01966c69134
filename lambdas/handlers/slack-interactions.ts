import { createSlackInteractionsHandler } from './channels/slack-interactions-route.js';
import { awsDecidingDependencies } from './composition/aws-deciding-dependencies.js';
import { awsSlackChannel, awsSlackInteractionParts } from './composition/aws-slack.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { HttpLambdaHandler } from './http/http-api.js';

/**
 * Lambda entry point of POST /integrations/slack/interactions: what deciding a card needs (as
 * the decision route has it), the Slack channel, its used signatures and its signing secret.
 */
export const handler: HttpLambdaHandler = composeOnFirstInvocation(() =>
  createSlackInteractionsHandler({
    ...awsDecidingDependencies(),
    slack: awsSlackChannel(),
    ...awsSlackInteractionParts(),
  }),
);
