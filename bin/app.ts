#!/usr/bin/env node
// The CDK app: `npx cdk deploy` deploys one CountersignStack, checked by cdk-nag's AWS Solutions rules.
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { ModelProvider } from '../lib/countersign.js';
import { COUNTERSIGN_STACK_ID, CountersignStack } from '../lib/countersign-stack.js';

const app = new App();

// Optional settings from `-c countersign:<name>=<value>`; the construct validates them.
function readContext(name: string): string | undefined {
  const value: unknown = app.node.tryGetContext(`countersign:${name}`);
  return value === undefined ? undefined : String(value);
}
const modelProvider = readContext('modelProvider') as ModelProvider | undefined;
const bedrockModelId = readContext('bedrockModelId');
const toolsModule = readContext('toolsModule');
const openAiBaseUrl = readContext('openAiBaseUrl');
const openAiSecretName = readContext('openAiSecretName');
// The channels: `slackChannelId` (cards routed to every approver) with the two secrets' names;
// `emailIdentity` and `emailFromAddress`. More routes: embed the construct (docs/approvers.md).
const slackSigningSecretName = readContext('slackSigningSecretName');
const slackBotTokenSecretName = readContext('slackBotTokenSecretName');
const slackChannelId = readContext('slackChannelId');
const emailIdentity = readContext('emailIdentity');
const emailFromAddress = readContext('emailFromAddress');

new CountersignStack(app, COUNTERSIGN_STACK_ID, {
  countersign: {
    ...(modelProvider === undefined ? {} : { modelProvider }),
    ...(bedrockModelId === undefined ? {} : { bedrockModelId }),
    ...(toolsModule === undefined ? {} : { toolsModule }),
  },
  ...(openAiBaseUrl === undefined || openAiSecretName === undefined
    ? {}
    : { openAiCompatible: { baseUrl: openAiBaseUrl, apiKeySecretName: openAiSecretName } }),
  ...(slackSigningSecretName === undefined ||
  slackBotTokenSecretName === undefined ||
  slackChannelId === undefined
    ? {}
    : {
        slack: {
          signingSecretName: slackSigningSecretName,
          botTokenSecretName: slackBotTokenSecretName,
          routes: [{ channelId: slackChannelId }],
        },
      }),
  ...(emailIdentity === undefined || emailFromAddress === undefined
    ? {}
    : { email: { identityName: emailIdentity, fromAddress: emailFromAddress } }),
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
