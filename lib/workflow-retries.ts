import { Duration } from 'aws-cdk-lib';
import { JitterType } from 'aws-cdk-lib/aws-stepfunctions';
import type { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { ERROR_NAMES } from '../lambdas/contract/state-names.js';

// How the run workflow retries its steps before a run fails; the states are lib/workflow.ts'.

/**
 * ContinueAsNew's StartExecution: any failure of the call (throttling, the open-executions limit)
 * or its timeout is tried again before the run is marked failed; the execution name makes a
 * repeated start of the same turn harmless.
 */
export const CONTINUE_AS_NEW_RETRY = {
  errors: ['States.TaskFailed', ERROR_NAMES.timeout],
  interval: Duration.seconds(2),
  backoffRate: 2,
  maxAttempts: 3,
};

/**
 * Transient faults (a throttled table, a KMS hiccup, a tool's TransientToolError) reach the state
 * machine as countersign.unavailable once the SDK's own retries are spent; every step is
 * idempotent, so it is tried again with backoff and full jitter before the run fails. A tool's
 * transient failure is bounded by ExecuteTools itself (MAXIMUM_TOOL_ATTEMPTS, fewer than these),
 * which then records the call "not applied" instead of failing the run.
 */
const RETRY_UNAVAILABLE = {
  errors: [ERROR_NAMES.unavailable],
  interval: Duration.seconds(1),
  backoffRate: 2,
  maxAttempts: 5,
  maxDelay: Duration.seconds(20),
  jitterStrategy: JitterType.FULL,
};

/**
 * An unexpected failure in a step (countersign.internal): every step is idempotent, so it is
 * tried again before the run fails.
 */
const RETRY_INTERNAL = {
  errors: [ERROR_NAMES.internal],
  interval: Duration.seconds(2),
  backoffRate: 2,
  maxAttempts: 2,
};

/**
 * The Lambda service's own transient errors, retried as AWS recommends for every Lambda task,
 * with full jitter so runs failing together do not retry together. Replaces the LambdaInvoke
 * default, which leaves out Lambda.TooManyRequestsException (retried below).
 */
const RETRY_LAMBDA_SERVICE = {
  errors: [
    'Lambda.ServiceException',
    'Lambda.AWSLambdaException',
    'Lambda.SdkClientException',
    'Lambda.ClientExecutionTimeoutException',
  ],
  interval: Duration.seconds(1),
  backoffRate: 2,
  maxAttempts: 6,
  maxDelay: Duration.seconds(30),
  jitterStrategy: JitterType.FULL,
};

/**
 * A throttled invoke: the step's reserved concurrency (a few per function by default) is busy,
 * e.g. with slow model turns. Waiting is cheap in a Standard workflow (billed per transition,
 * not per second), so a throttled step waits for up to about 10 minutes before the run fails.
 */
const RETRY_LAMBDA_THROTTLED = {
  errors: ['Lambda.TooManyRequestsException'],
  interval: Duration.seconds(2),
  backoffRate: 2,
  maxAttempts: 12,
  maxDelay: Duration.seconds(60),
  jitterStrategy: JitterType.FULL,
};

/**
 * The retries of every Lambda step: the Lambda service's faults, throttling, transient faults
 * (countersign.unavailable), then countersign.internal.
 *
 * @example
 * addStepRetries(new LambdaInvoke(this, 'Prepare', { lambdaFunction }));
 */
export function addStepRetries(task: LambdaInvoke): LambdaInvoke {
  task.addRetry(RETRY_LAMBDA_SERVICE);
  task.addRetry(RETRY_LAMBDA_THROTTLED);
  task.addRetry(RETRY_UNAVAILABLE);
  task.addRetry(RETRY_INTERNAL);
  return task;
}

/**
 * NotifyCaller: a webhook the receiver did not take (a 5xx, a 429, no answer) is posted again
 * with backoff, over about half an hour (5 s, 15 s, 45 s, … 1,215 s), like the retries of the
 * webhook services receivers know. The run's answer stands whatever happens here.
 */
export const WEBHOOK_RETRY = {
  errors: [ERROR_NAMES.webhookFailed],
  interval: Duration.seconds(5),
  backoffRate: 3,
  maxAttempts: 6,
};
