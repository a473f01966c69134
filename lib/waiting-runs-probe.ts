import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { WAITING_RUNS_PROBE_INTERVAL_MINUTES } from '../lambdas/contract/table-layout.js';

/** How often the waiting-runs probe measures the approval backlog and redelivers decisions. */
export const WAITING_RUNS_PROBE_INTERVAL = Duration.minutes(WAITING_RUNS_PROBE_INTERVAL_MINUTES);

/** How often EventBridge retries a probe delivery it could not make (a throttled or missing function). */
const PROBE_DELIVERY_RETRY_ATTEMPTS = 3;

/**
 * Runs the waiting-runs probe (`lambdas/handlers/report-waiting-runs.ts`) on a schedule:
 * nothing runs while a run waits, so only a probe can tell how long it has waited. Returns the
 * schedule's dead-letter queue (encrypted, TLS only), where undelivered events are kept.
 *
 * @example
 * const deadLetters = scheduleWaitingRunsProbe(this, functions['report-waiting-runs'], removalPolicy);
 */
export function scheduleWaitingRunsProbe(
  scope: Construct,
  probe: IFunction,
  removalPolicy: RemovalPolicy,
): Queue {
  const deadLetterQueue = new Queue(scope, 'WaitingRunsProbeDeadLetterQueue', {
    // SQS managed encryption: EventBridge may send to it without a key policy of its own.
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
    removalPolicy,
  });
  Validations.of(deadLetterQueue).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason:
      'This queue is the dead-letter queue of the waiting-runs probe schedule (an EventBridge target), not a work queue: a dead-letter queue of its own would only move the same events once more.',
  });
  new Rule(scope, 'WaitingRunsProbeSchedule', {
    description: 'countersign: measure how long runs wait for a decision',
    schedule: Schedule.rate(WAITING_RUNS_PROBE_INTERVAL),
    targets: [
      new LambdaFunction(probe, {
        // A throttled or failed delivery is tried again while the measurement is still current,
        // then kept in the dead-letter queue (and ProbeDeadLetters alarms) instead of vanishing.
        retryAttempts: PROBE_DELIVERY_RETRY_ATTEMPTS,
        maxEventAge: WAITING_RUNS_PROBE_INTERVAL,
        deadLetterQueue,
      }),
    ],
  });
  return deadLetterQueue;
}
