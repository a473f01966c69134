import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { NOTIFICATION_DETAIL_TYPES, NOTIFICATION_EVENT_SOURCE } from '../contract/notification-events.js';
import type { AwaitingApprovalEvent, CardClosedEvent, RunNotifier } from '../core/ports.js';

/**
 * Puts `Run Awaiting Approval` and `Card Closed` on an EventBridge bus so teams (and the Slack
 * and email channels) can route them to chat or mail. The details name the run, its turn, its
 * tools and the approver groups its card is routed to (empty: every approver): no arguments, no
 * previews, no token.
 */
export class EventBridgeRunNotifier implements RunNotifier {
  public constructor(private readonly options: { client: EventBridgeClient; eventBusName: string }) {}

  public async runAwaitingApproval(event: AwaitingApprovalEvent): Promise<void> {
    await this.put(NOTIFICATION_DETAIL_TYPES.awaitingApproval, {
      runId: event.runId,
      toolNames: event.toolNames,
      pausedAt: event.pausedAt,
      approverGroups: event.approverGroups,
    });
  }

  public async cardClosed(event: CardClosedEvent): Promise<void> {
    await this.put(NOTIFICATION_DETAIL_TYPES.cardClosed, {
      runId: event.runId,
      turn: event.turn,
      because: event.because,
      closedAt: event.closedAt,
      approverGroups: event.approverGroups,
    });
  }

  private async put(detailType: string, detail: Record<string, unknown>): Promise<void> {
    const result = await this.options.client.send(
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
