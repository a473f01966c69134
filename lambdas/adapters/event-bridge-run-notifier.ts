import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { cardPageUrl } from '../contract/card-address.js';
import type { AwaitingApprovalEvent, ExternalRunAnsweredEvent, RunNotifier } from '../core/ports.js';

export const EVENT_SOURCE = 'countersign';
export const AWAITING_APPROVAL_DETAIL_TYPE = 'Run Awaiting Approval';
export const EXTERNAL_RUN_ANSWERED_DETAIL_TYPE = 'External Run Answered';

/**
 * The detail of `Run Awaiting Approval`: the run, its tools, the approver groups to notify (empty:
 * every approver), why (`paused`, or `escalated` when an unanswered card reached more groups) and,
 * where the inbox page's URL is known, the card's own address on it (`cardUrl`, which opens the
 * card after sign-in). No arguments, no previews, no token.
 *
 * @example
 * describeAwaitingApproval(event, 'https://abc.execute-api.eu-west-1.amazonaws.com/').cardUrl;
 */
export function describeAwaitingApproval(
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

/** Puts `Run Awaiting Approval` on an EventBridge bus so teams can route it to chat or mail. */
export class EventBridgeRunNotifier implements RunNotifier {
  public constructor(
    private readonly options: {
      client: EventBridgeClient;
      eventBusName: string;
      /** The inbox page's URL (COUNTERSIGN_INBOX_URL), for the card's address. @default - no `cardUrl` */
      inboxUrl?: string;
    },
  ) {}

  public async runAwaitingApproval(event: AwaitingApprovalEvent): Promise<void> {
    await this.put(AWAITING_APPROVAL_DETAIL_TYPE, describeAwaitingApproval(event, this.options.inboxUrl));
  }

  /**
   * `External Run Answered` (docs/external-agents.md): the run, its caller, its outcome and
   * each call's decision by position; the caller reads the rest from the API.
   */
  public async externalRunAnswered(event: ExternalRunAnsweredEvent): Promise<void> {
    await this.put(EXTERNAL_RUN_ANSWERED_DETAIL_TYPE, {
      runId: event.runId,
      owner: event.owner,
      configurationId: event.configurationId,
      status: event.status,
      calls: event.calls,
    });
  }

  private async put(detailType: string, detail: object): Promise<void> {
    const result = await this.options.client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: this.options.eventBusName,
            Source: EVENT_SOURCE,
            DetailType: detailType,
            Detail: JSON.stringify(detail),
          },
        ],
      }),
    );
    if ((result.FailedEntryCount ?? 0) > 0) throw new Error(`EventBridge refused the ${detailType} event.`);
  }
}
