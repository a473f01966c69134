import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { AwaitingApprovalEvent, ExternalRunAnsweredEvent, RunNotifier } from '../core/ports.js';

export const EVENT_SOURCE = 'countersign';
export const AWAITING_APPROVAL_DETAIL_TYPE = 'Run Awaiting Approval';
export const EXTERNAL_RUN_ANSWERED_DETAIL_TYPE = 'External Run Answered';

/**
 * Puts `Run Awaiting Approval` on an EventBridge bus so teams can route it to chat or mail.
 * The detail names the run, its tools and the approver groups its card is routed to (empty:
 * every approver): no arguments, no previews, no token.
 */
export class EventBridgeRunNotifier implements RunNotifier {
  public constructor(private readonly options: { client: EventBridgeClient; eventBusName: string }) {}

  public async runAwaitingApproval(event: AwaitingApprovalEvent): Promise<void> {
    await this.put(AWAITING_APPROVAL_DETAIL_TYPE, {
      runId: event.runId,
      toolNames: event.toolNames,
      pausedAt: event.pausedAt,
      approverGroups: event.approverGroups,
    });
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

  private async put(detailType: string, detail: Record<string, unknown>): Promise<void> {
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
