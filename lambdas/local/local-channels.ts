import { SESv2Client } from '@aws-sdk/client-sesv2';
import { DynamoEmailNotificationStore } from '../adapters/dynamo/email-notification-store.js';
import { RunTable } from '../adapters/dynamo/run-table.js';
import { DynamoSlackStore } from '../adapters/dynamo/slack-message-store.js';
import { SesMailSender } from '../adapters/ses-mail-sender.js';
import { SlackWebApi } from '../adapters/slack/slack-web-api.js';
import { cardPageUrl } from '../contract/card-address.js';
import type { SlackRoute } from '../core/channels/slack-routes.js';
import { nameErrorClass } from '../core/errors.js';
import type { RunDependencies } from '../core/run-dependencies.js';
import {
  type ChannelEvent,
  createEmailNotifyHandler,
  createSlackNotifyHandler,
} from '../handlers/channels/channel-event-handlers.js';
import { createSlackInteractionsHandler } from '../handlers/channels/slack-interactions-route.js';
import type { ChannelRouteHandlers } from './local-routes.js';

/** The notification channels a local runtime switches on, as the construct's `channels` props do deployed. */
export interface LocalChannelOptions {
  readonly slack?: {
    readonly signingSecret: string;
    readonly botToken: string;
    readonly routes: readonly SlackRoute[];
    /** Where Slack's Web API is (a local stand-in). @default - https://slack.com/api */
    readonly apiUrl?: string;
  };
  readonly email?: {
    /** The sender, as the verified SES identity would be. */
    readonly fromAddress: string;
    /** Where SES is (a local stand-in speaking the SESv2 API). @default - SES in the SDK's default region */
    readonly sesEndpoint?: string;
  };
}

/** The channels of a local runtime: what they are handed, the route they serve, and how to wait for them. */
export interface LocalChannels {
  /** Hands a notification event to each channel that is on, in the background (deployed: EventBridge rules). */
  deliver(event: ChannelEvent): void;
  readonly routeHandlers: ChannelRouteHandlers;
  /** Resolves when every delivery handed over so far has finished (tests wait on it). */
  settle(): Promise<void>;
  /** Sends the email digests that are due, as the channel's schedule does deployed (every 5 minutes here too). */
  mailDueDigests(): Promise<void>;
  stop(): void;
}

/** How often a local runtime looks for due digests: the deployed schedule's rate. */
const DIGEST_INTERVAL_MILLISECONDS = 5 * 60 * 1000;

/**
 * The same channel handlers as the deployed functions, run in-process: the notifier hands each
 * event to them (no EventBridge, so no retries and no dead-letter queue: a failure is logged and
 * counted, and the channel itself never fails a decision), the Slack route is served by the local
 * server, and digests are sent on a timer.
 *
 * @example
 * const channels = startLocalChannels({ slack: { signingSecret, botToken, routes, apiUrl } }, dependencies, table);
 */
export function startLocalChannels(
  options: LocalChannelOptions,
  dependencies: RunDependencies,
  table: { readonly client: RunTable['client']; readonly tableName: string; readonly inboxUrl: () => string },
): LocalChannels {
  const runTable = new RunTable(table.client, table.tableName, undefined, dependencies.clock);
  const cardUrl = (runId: string) => cardPageUrl(table.inboxUrl(), runId);
  const targets: Array<(event: unknown) => Promise<void>> = [];
  const routeHandlers: { 'slack-interactions'?: ChannelRouteHandlers['slack-interactions'] } = {};
  if (options.slack !== undefined) {
    const { signingSecret, botToken, routes, apiUrl } = options.slack;
    const store = new DynamoSlackStore(runTable);
    const slack = {
      api: new SlackWebApi({ botToken: async () => botToken, ...(apiUrl === undefined ? {} : { apiUrl }) }),
      messages: store,
      routes,
      cardUrl,
    };
    targets.push(createSlackNotifyHandler({ ...dependencies, slack }));
    routeHandlers['slack-interactions'] = createSlackInteractionsHandler({
      ...dependencies,
      slack,
      slackReplays: store,
      slackSigningSecret: async () => signingSecret,
    });
  }
  let mailDueDigests = async (): Promise<void> => {};
  let timer: NodeJS.Timeout | undefined;
  if (options.email !== undefined) {
    const { fromAddress, sesEndpoint } = options.email;
    const client = new SESv2Client(
      sesEndpoint === undefined
        ? {}
        : {
            endpoint: sesEndpoint,
            region: 'us-east-1',
            // The stand-in checks no signature; SES itself would refuse these.
            credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          },
    );
    const notify = createEmailNotifyHandler({
      ...dependencies,
      email: {
        mail: new SesMailSender({ client, fromAddress }),
        notifications: new DynamoEmailNotificationStore(runTable),
        cardUrl,
      },
    });
    targets.push(notify);
    mailDueDigests = () => notify({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} });
    // A failing digest run is logged as a failing delivery is, not dropped (the next run retries).
    const mailDigestsLogged = () =>
      mailDueDigests().catch((error: unknown) =>
        dependencies.logger.error('channel event failed', {
          detailType: 'Scheduled Event',
          errorClass: nameErrorClass(error),
        }),
      );
    timer = setInterval(() => void mailDigestsLogged(), DIGEST_INTERVAL_MILLISECONDS);
    timer.unref();
  }
  const pending = new Set<Promise<void>>();
  return {
    deliver(event) {
      for (const target of targets) {
        const delivery = target(event).catch((error: unknown) =>
          dependencies.logger.error('channel event failed', {
            detailType: event['detail-type'],
            errorClass: nameErrorClass(error),
          }),
        );
        pending.add(delivery);
        void delivery.finally(() => pending.delete(delivery));
      }
    },
    routeHandlers,
    settle: async () => {
      while (pending.size > 0) await Promise.all([...pending]);
    },
    mailDueDigests,
    stop: () => clearInterval(timer),
  };
}
