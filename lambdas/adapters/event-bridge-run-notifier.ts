import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { AwaitingApprovalEvent, RunNotifier } from '../core/ports.js';

export const EVENT_SOURCE = 'countersign';
export const AWAITING_APPROVAL_DETAIL_TYPE = 'Run Awaiting Approval';

/**
 * Puts `Run Awaiting Approval` on an EventBridge bus so teams can route it to chat or mail.
 * The detail names the run, its tools, the approver groups to notify (empty: every approver) and
 * why (`paused`, or `escalated` when an unanswered card reached more groups): no arguments, no
 * previews, no token.
 */
export class EventBridgeRunNotifier implements RunNotifier {
  public constructor(private readonly options: { client: EventBridgeClient; eventBusName: string }) {}

  public async runAwaitingApproval(event: AwaitingApprovalEvent): Promise<void> {
    const result = await this.options.client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: this.options.eventBusName,
            Source: EVENT_SOURCE,
            DetailType: AWAITING_APPROVAL_DETAIL_TYPE,
            Detail: JSON.stringify({
              runId: event.runId,
              toolNames: event.toolNames,
              pausedAt: event.pausedAt,
              approverGroups: event.approverGroups,
              reason: event.reason,
            }),
          },
        ],
      }),
    );
    if ((result.FailedEntryCount ?? 0) > 0)
      throw new Error('EventBridge refused the Run Awaiting Approval event.');
  }
}
