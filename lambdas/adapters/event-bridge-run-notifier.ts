import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { cardPageUrl } from '../contract/card-address.js';
import { NOTIFICATION_DETAIL_TYPES, NOTIFICATION_EVENT_SOURCE } from '../contract/notification-events.js';
import type {
  AwaitingApprovalEvent,
  CardClosedEvent,
  ExternalRunAnsweredEvent,
  RunNotifier,
} from '../core/ports.js';
import { surfaceTransientFaults } from './aws-faults.js';

/** The client module, evaluated on the first event (bundled, but not run at a cold start). */
function loadEventBridgeClient(): Promise<typeof import('@aws-sdk/client-eventbridge')> {
  return import('@aws-sdk/client-eventbridge');
}

/**
 * The detail of `Run Awaiting Approval`: the run, its tools, the approver groups to notify (empty:
 * every approver), why (`paused`, or `escalated` when an unanswered card reached more groups) and,
 * where the inbox page's URL is known, the card's own address on it (`cardUrl`, which opens the
 * card after sign-in). No arguments, no previews, no token.
 *
 * @example
 * buildAwaitingApprovalDetail(event, 'https://abc.execute-api.eu-west-1.amazonaws.com/').cardUrl;
 */
export function buildAwaitingApprovalDetail(
  event: AwaitingApprovalEvent,
  inboxUrl: string | undefined,
): AwaitingApprovalEvent & { cardUrl?: string } {
  return {
    runId: event.runId,
    toolNames: event.toolNames,
    pausedAt: event.pausedAt,
    approverGroups: event.approverGroups,
    reason: event.reason,
    ...(inboxUrl === undefined ? {} : { cardUrl: cardPageUrl(inboxUrl, event.runId) }),
  };
}

/** The fields an event's detail carries, and no other the event holds. */
const DETAIL_FIELDS = {
  cardClosed: ['runId', 'turn', 'because', 'closedAt', 'approverGroups'],
  externalRunAnswered: ['runId', 'owner', 'configurationId', 'status', 'calls'],
} as const satisfies {
  cardClosed: ReadonlyArray<keyof CardClosedEvent>;
  externalRunAnswered: ReadonlyArray<keyof ExternalRunAnsweredEvent>;
};

function pickFields<Event extends object, Field extends keyof Event>(
  event: Event,
  fields: readonly Field[],
): Pick<Event, Field> {
  return Object.fromEntries(fields.map((field) => [field, event[field]])) as Pick<Event, Field>;
}

/**
 * Puts `Run Awaiting Approval` and `Card Closed` on an EventBridge bus so teams (and the Slack
 * and email channels) can route them to chat or mail. The details name the run, its turn, its
 * tools and the approver groups its card is routed to (empty: every approver): no arguments, no
 * previews, no token. The SDK client is evaluated on the first event, so a function that
 * announces nothing in an invocation does not run its initialisation.
 *
 * @example
 * const notifier = new EventBridgeRunNotifier({ eventBusName: 'default' });
 * await notifier.cardClosed({ runId, turn: 1, because: 'decided', closedAt, approverGroups: [] });
 */
export class EventBridgeRunNotifier implements RunNotifier {
  private client: EventBridgeClient | undefined;

  public constructor(
    private readonly options: {
      eventBusName: string;
      /** @default - a client of the function's Region whose transient faults are `unavailable`, created on the first event */
      client?: EventBridgeClient;
      /** The inbox page's URL (COUNTERSIGN_INBOX_URL), for the card's address. @default - no `cardUrl` */
      inboxUrl?: string;
    },
  ) {
    this.client = options.client;
  }

  public async runAwaitingApproval(event: AwaitingApprovalEvent): Promise<void> {
    await this.put(
      NOTIFICATION_DETAIL_TYPES.awaitingApproval,
      buildAwaitingApprovalDetail(event, this.options.inboxUrl),
    );
  }

  public async cardClosed(event: CardClosedEvent): Promise<void> {
    await this.put(NOTIFICATION_DETAIL_TYPES.cardClosed, pickFields(event, DETAIL_FIELDS.cardClosed));
  }

  /**
   * `External Run Answered` (docs/external-agents.md): the run, its caller, its outcome and
   * each call's decision by position (an approved edited call's editor); the caller reads the rest, the
   * edited arguments among it, from the API.
   */
  public async externalRunAnswered(event: ExternalRunAnsweredEvent): Promise<void> {
    await this.put(
      NOTIFICATION_DETAIL_TYPES.externalRunAnswered,
      pickFields(event, DETAIL_FIELDS.externalRunAnswered),
    );
  }

  private async put(detailType: string, detail: object): Promise<void> {
    const { EventBridgeClient, PutEventsCommand } = await loadEventBridgeClient();
    this.client ??= surfaceTransientFaults(new EventBridgeClient({}));
    const result = await this.client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: this.options.eventBusName,
            Source: NOTIFICATION_EVENT_SOURCE,
            DetailType: detailType,
            Detail: JSON.stringify(detail),
          },
        ],
      }),
    );
    if ((result.FailedEntryCount ?? 0) > 0) throw new Error(`EventBridge refused the ${detailType} event.`);
  }
}
