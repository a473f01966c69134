import * as z from 'zod/mini';
import { runInInvocationScope } from '../../adapters/invocation-scope.js';
import {
  awaitingApprovalDetailSchema,
  cardClosedDetailSchema,
  NOTIFICATION_DETAIL_TYPES,
  NOTIFICATION_EVENT_SOURCE,
} from '../../contract/notification-events.js';
import {
  type EmailDependencies,
  mailDueDigests,
  mailWaitingCard,
} from '../../core/channels/mail-approvers.js';
import { type SlackDependencies, syncSlackMessages } from '../../core/channels/sync-slack-messages.js';

/** An EventBridge event as a rule target receives it (and as the local runtime hands it over). */
const eventSchema = z.object({
  id: z.optional(z.string()),
  source: z.string(),
  'detail-type': z.string(),
  detail: z.unknown(),
});

/** The event a channel function is invoked with: countersign's notification events, or its schedule. */
export type ChannelEvent = z.infer<typeof eventSchema>;

/** What one channel does with one event; `ignored` for an event it does not act on. */
type ChannelAction = () => Promise<void>;

/**
 * The Slack channel's rule target: `Run Awaiting Approval` posts the card (and, escalated,
 * updates the messages posted to say so), `Card Closed` updates
 * its message (with the closing's turn and reason). The event only names the run: what is posted
 * is read from the store (`syncSlackMessages`), so a repeated or late event changes nothing.
 *
 * @example
 * export const handler = createSlackNotifyHandler({ ...cardReaderDependencies, users, slack });
 */
export function createSlackNotifyHandler(dependencies: SlackDependencies): (event: unknown) => Promise<void> {
  return channelHandler(dependencies, 'SlackNotify', (event) => {
    if (event.source !== NOTIFICATION_EVENT_SOURCE) return undefined;
    if (event['detail-type'] === NOTIFICATION_DETAIL_TYPES.awaitingApproval) {
      const detail = awaitingApprovalDetailSchema.parse(event.detail);
      // An escalation re-renders the messages already posted (they say so) and posts to the new group's.
      return () => syncSlackMessages(dependencies, detail.runId, { refresh: detail.reason === 'escalated' });
    }
    if (event['detail-type'] === NOTIFICATION_DETAIL_TYPES.cardClosed) {
      const detail = cardClosedDetailSchema.parse(event.detail);
      return () =>
        syncSlackMessages(dependencies, detail.runId, {
          closed: { turn: detail.turn, because: detail.because },
        });
    }
    return undefined;
  });
}

/**
 * The email channel's rule targets: `Run Awaiting Approval` mails the card (or queues it for a
 * digest), and the channel's schedule (`aws.events`, `Scheduled Event`) sends the digests due.
 *
 * @example
 * export const handler = createEmailNotifyHandler({ runs, users, clock, logger, metrics, email });
 */
export function createEmailNotifyHandler(dependencies: EmailDependencies): (event: unknown) => Promise<void> {
  return channelHandler(dependencies, 'EmailNotify', (event) => {
    if (event.source === 'aws.events' && event['detail-type'] === 'Scheduled Event') {
      return () => mailDueDigests(dependencies);
    }
    if (event.source !== NOTIFICATION_EVENT_SOURCE) return undefined;
    if (event['detail-type'] === NOTIFICATION_DETAIL_TYPES.awaitingApproval) {
      const detail = awaitingApprovalDetailSchema.parse(event.detail);
      return () => mailWaitingCard(dependencies, detail.runId);
    }
    return undefined;
  });
}

/**
 * One channel function: reads the event, runs what it asks in the event's invocation scope, and
 * lets a failure throw, so Lambda retries the event and then keeps it in the channel's
 * dead-letter queue. An event it does not act on is logged and dropped; a malformed one is an error.
 */
function channelHandler(
  dependencies: Pick<SlackDependencies, 'logger'>,
  operation: string,
  route: (event: ChannelEvent) => ChannelAction | undefined,
): (event: unknown) => Promise<void> {
  return async (raw) => {
    const event = eventSchema.parse(raw);
    const runId = (event.detail as { runId?: unknown } | null)?.runId;
    await runInInvocationScope(
      {
        correlationId: event.id?.slice(0, 100) ?? 'unknown',
        operation,
        ...(typeof runId === 'string' ? { runId: runId.slice(0, 100) } : {}),
      },
      async () => {
        const action = route(event);
        if (action === undefined) {
          dependencies.logger.warn('channel event ignored', {
            source: event.source,
            detailType: event['detail-type'],
          });
          return;
        }
        await action();
      },
    );
  };
}
