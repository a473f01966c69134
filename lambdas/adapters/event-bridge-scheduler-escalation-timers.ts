import { createHash } from 'node:crypto';
import { ConflictException, CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import type { EscalationTimer } from '../core/approvals/escalation-ladder.js';
import type { Clock, EscalationTimers } from '../core/ports.js';

/**
 * How far ahead of now a schedule is put at the earliest: a step already due when a pause is
 * entered again still fires, and Scheduler never sees a time in its past.
 */
const EARLIEST_LEAD_MILLISECONDS = 60_000;

/** Retries of one escalation delivery (a throttled or failing function), within the hour. */
const DELIVERY_RETRY_ATTEMPTS = 10;
const DELIVERY_MAXIMUM_EVENT_AGE_SECONDS = 3600;

export interface EventBridgeSchedulerEscalationTimersOptions {
  client: SchedulerClient;
  /** The schedule group the construct created for countersign's escalations. */
  groupName: string;
  /** The escalate-card function a schedule invokes. */
  targetArn: string;
  /** The role Scheduler assumes to invoke it (lambda:InvokeFunction on that function only). */
  roleArn: string;
  clock: Clock;
}

/**
 * `EscalationTimers` on EventBridge Scheduler: one one-time schedule per step (`at(...)`, UTC),
 * deleted by Scheduler once it has invoked its target. Named by run, turn and step, so arming a
 * step again meets its own schedule (ConflictException) and changes nothing; nothing is ever
 * cancelled: a step that fires for a card decided meanwhile does nothing.
 *
 * @example
 * const timers = new EventBridgeSchedulerEscalationTimers({ client: new SchedulerClient({}), groupName, targetArn, roleArn, clock });
 * await timers.arm([{ runId, turn: 2, digest, step: 0, at: '2026-03-02T09:45:00.000Z' }]);
 */
export class EventBridgeSchedulerEscalationTimers implements EscalationTimers {
  public constructor(private readonly options: EventBridgeSchedulerEscalationTimersOptions) {}

  public async arm(timers: readonly EscalationTimer[]): Promise<void> {
    await Promise.all(timers.map((timer) => this.armOne(timer)));
  }

  private async armOne(timer: EscalationTimer): Promise<void> {
    const earliest = this.options.clock.now().getTime() + EARLIEST_LEAD_MILLISECONDS;
    const at = new Date(Math.max(Date.parse(timer.at), earliest));
    try {
      await this.options.client.send(
        new CreateScheduleCommand({
          Name: scheduleNameOf(timer),
          GroupName: this.options.groupName,
          ScheduleExpression: `at(${at.toISOString().slice(0, 19)})`,
          ScheduleExpressionTimezone: 'UTC',
          FlexibleTimeWindow: { Mode: 'OFF' },
          ActionAfterCompletion: 'DELETE',
          Target: {
            Arn: this.options.targetArn,
            RoleArn: this.options.roleArn,
            // Identifiers only: the card says the rest, and the escalation re-reads it.
            Input: JSON.stringify({
              runId: timer.runId,
              turn: timer.turn,
              digest: timer.digest,
              step: timer.step,
            }),
            RetryPolicy: {
              MaximumRetryAttempts: DELIVERY_RETRY_ATTEMPTS,
              MaximumEventAgeInSeconds: DELIVERY_MAXIMUM_EVENT_AGE_SECONDS,
            },
          },
        }),
      );
    } catch (error) {
      // Armed already (a pause entered again): the schedule that exists is this very step.
      if (!(error instanceof ConflictException)) throw error;
    }
  }
}

/**
 * The schedule's name (at most 64 of `[0-9a-zA-Z-_.]`): the run id, the turn and the step. A run
 * id is a UUID; anything else is hashed into the name's alphabet rather than refused.
 *
 * @example
 * scheduleNameOf({ runId: '4f0c…', turn: 3, step: 1 }) // 'esc-4f0c…-3-1'
 */
function scheduleNameOf(timer: Pick<EscalationTimer, 'runId' | 'turn' | 'step'>): string {
  const runId = /^[0-9a-zA-Z-]{1,40}$/.test(timer.runId)
    ? timer.runId
    : createHash('sha256').update(timer.runId).digest('hex').slice(0, 40);
  return `esc-${runId}-${timer.turn}-${timer.step}`;
}
