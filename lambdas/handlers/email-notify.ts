import { createEmailNotifyHandler } from './channels/channel-event-handlers.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsEmailChannel } from './composition/aws-email.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';

/**
 * Lambda entry point of the email channel (a rule target of `Run Awaiting Approval`, and of the
 * digest schedule): the table and SES; no sealer (a mail holds no preview), no model.
 */
export const handler = composeOnFirstInvocation(() =>
  createEmailNotifyHandler({ ...awsBaseDependencies(), email: awsEmailChannel() }),
);
