import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { RunTable } from '../../adapters/dynamo/run-table.js';
import { DynamoSlackStore } from '../../adapters/dynamo/slack-message-store.js';
import { createSecretsManagerSecret } from '../../adapters/secrets-manager-secret.js';
import { SlackWebApi } from '../../adapters/slack/slack-web-api.js';
import { cardPageUrl } from '../../contract/card-address.js';
import type { SlackInteractionDependencies } from '../../core/channels/receive-slack-interaction.js';
import type { SlackChannel } from '../../core/channels/slack-ports.js';
import { CountersignError } from '../../core/errors.js';
import { slackChannelEnvironment } from '../config.js';
import { awsBaseDependencies, awsRunStoreOptions } from './aws-base-dependencies.js';

let parts: { channel: SlackChannel; store: DynamoSlackStore; secrets: SecretsManagerClient } | undefined;

/**
 * The Slack channel of the Slack functions: Slack's Web API with the bot token from Secrets
 * Manager, the messages it posted (the table), the routes and the inbox's URL (the construct's
 * `channels.slack` props, as COUNTERSIGN_SLACK_* variables).
 *
 * @example
 * const notify = createSlackNotifyHandler({ ...awsBaseDependencies(), slack: awsSlackChannel(), ... });
 */
export function awsSlackChannel(): SlackChannel {
  return slackParts().channel;
}

/**
 * What only the interaction route adds: the used signatures (the table) and the signing secret,
 * which only that function may read.
 */
export function awsSlackInteractionParts(): Pick<
  SlackInteractionDependencies,
  'slackReplays' | 'slackSigningSecret'
> {
  const { store, secrets } = slackParts();
  const secretArn = slackChannelEnvironment().COUNTERSIGN_SLACK_SIGNING_SECRET_ARN;
  if (secretArn === undefined) {
    throw new Error('countersign configuration is invalid: COUNTERSIGN_SLACK_SIGNING_SECRET_ARN: required');
  }
  return {
    slackReplays: store,
    slackSigningSecret: createSecretsManagerSecret(secrets, secretArn, {
      field: 'signingSecret',
      ...secretErrors('signing secret', 'signingSecret'),
    }),
  };
}

function slackParts(): NonNullable<typeof parts> {
  if (parts !== undefined) return parts;
  const environment = slackChannelEnvironment();
  const { client, tableName, retention } = awsRunStoreOptions();
  const store = new DynamoSlackStore(new RunTable(client, tableName, retention, awsBaseDependencies().clock));
  const secrets = new SecretsManagerClient({});
  parts = {
    store,
    secrets,
    channel: {
      api: new SlackWebApi({
        botToken: createSecretsManagerSecret(secrets, environment.COUNTERSIGN_SLACK_BOT_TOKEN_SECRET_ARN, {
          field: 'botToken',
          ...secretErrors('bot token', 'botToken'),
        }),
      }),
      messages: store,
      routes: environment.COUNTERSIGN_SLACK_ROUTES,
      cardUrl: (runId) => cardPageUrl(environment.COUNTERSIGN_INBOX_URL, runId),
    },
  };
  return parts;
}

/** A secret that cannot be read or holds nothing: the message names the secret, never its value. */
function secretErrors(what: string, field: string): { unreadable: () => Error; empty: () => Error } {
  return {
    unreadable: () =>
      new CountersignError('configuration', `The Slack ${what} could not be read from Secrets Manager.`, {
        expose: false,
      }),
    empty: () =>
      new CountersignError(
        'configuration',
        `The Slack ${what} secret is empty: store the value, or JSON with a "${field}" field.`,
        { expose: false },
      ),
  };
}
