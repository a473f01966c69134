import { SESv2Client } from '@aws-sdk/client-sesv2';
import { DynamoEmailNotificationStore } from '../../adapters/dynamo/email-notification-store.js';
import { RunTable } from '../../adapters/dynamo/run-table.js';
import { SesMailSender } from '../../adapters/ses-mail-sender.js';
import { cardPageUrl } from '../../contract/card-address.js';
import type { EmailChannel } from '../../core/channels/email-ports.js';
import { emailChannelEnvironment } from '../config.js';
import { awsBaseDependencies, awsRunStoreOptions } from './aws-base-dependencies.js';

let channel: EmailChannel | undefined;

/**
 * The email channel of its function: Amazon SES from the verified sender (the construct's
 * `channels.email` props, as COUNTERSIGN_EMAIL_FROM_ADDRESS), the mails and digests (the table),
 * and the inbox's URL for the deep links.
 *
 * @example
 * const notify = createEmailNotifyHandler({ ...awsBaseDependencies(), email: awsEmailChannel() });
 */
export function awsEmailChannel(): EmailChannel {
  if (channel !== undefined) return channel;
  const environment = emailChannelEnvironment();
  const { client, tableName, retention } = awsRunStoreOptions();
  channel = {
    mail: new SesMailSender({
      client: new SESv2Client({}),
      fromAddress: environment.COUNTERSIGN_EMAIL_FROM_ADDRESS,
    }),
    notifications: new DynamoEmailNotificationStore(
      new RunTable(client, tableName, retention, awsBaseDependencies().clock),
    ),
    cardUrl: (runId) => cardPageUrl(environment.COUNTERSIGN_INBOX_URL, runId),
  };
  return channel;
}
