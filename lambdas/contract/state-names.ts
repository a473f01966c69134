import { STEP_ERROR_PREFIX } from '../core/errors.js';

/**
 * The names the run workflow is wired by: its state names (the CDK definition names its states
 * so, the local runner and the step handlers are keyed by them) and the error names that route
 * it (thrown by a step, sent with SendTaskFailure or StopExecution, caught by the definition).
 * Written once here; a name that differs between two of them would silently misroute a run.
 */

/**
 * The state names of the run workflow.
 *
 * @example
 * new LambdaInvoke(this, STATE_NAMES.modelTurn, { ... });
 */
export const STATE_NAMES = {
  prepare: 'Prepare',
  resume: 'Resume?',
  modelTurn: 'ModelTurn',
  route: 'Route',
  awaitApproval: 'AwaitApproval',
  executeTools: 'ExecuteTools',
  executed: 'Executed',
  recordRejection: 'RecordRejection',
  finish: 'Finish',
  continueAsNew: 'ContinueAsNew',
  markFailed: 'MarkFailed',
  markExpired: 'MarkExpired',
  /** After the wait: an external run's decision is recorded, anyone else's carried out. */
  afterApproval: 'AfterApproval',
  afterRejection: 'AfterRejection',
  afterExpiry: 'AfterExpiry',
  /** An external run's end (docs/external-agents.md): its answer recorded and announced. */
  recordExternalDecision: 'RecordExternalDecision',
  /** After it: an edit goes back to a fresh card (through ExecuteTools), an answer to the caller. */
  afterExternalDecision: 'AfterExternalDecision',
  /** The answer posted to the caller's webhook, retried with backoff; never fails the run. */
  notifyCaller: 'NotifyCaller',
  done: 'Done',
  expired: 'Expired',
  runFailed: 'RunFailed',
} as const;

/** One state of the run workflow. */
export type StateName = (typeof STATE_NAMES)[keyof typeof STATE_NAMES];

/**
 * The error names of the run workflow.
 *
 * @example
 * awaitApproval.addCatch(recordRejection, { errors: [ERROR_NAMES.rejected], resultPath: '$.rejection' });
 */
export const ERROR_NAMES = {
  /**
   * A rejection ends the approval wait with this (SendTaskFailure, or AwaitApproval itself when a
   * retried pause finds the rejection on record); the definition routes it to RecordRejection.
   */
  rejected: 'countersign.Rejected',
  /**
   * A retried or re-driven pause found an approval of its turn on record: AwaitApproval ends with
   * this instead of reopening the card, and the definition routes it to ExecuteTools.
   */
  approved: 'countersign.Approved',
  /** An unexpected failure in a step: retried, since every step is idempotent, before the run fails. */
  internal: 'countersign.internal',
  /**
   * A transient fault (a throttled or failing AWS service, a tool's `TransientToolError`): retried
   * with backoff and jitter before the run fails.
   */
  unavailable: 'countersign.unavailable',
  /** The Fail state a run ends in once MarkFailed has recorded its failure. */
  runFailed: 'countersign.RunFailed',
  /** A cancelled run's execution is stopped with this. */
  cancelled: 'countersign.Cancelled',
  /** The execution of a run whose card cannot be opened is stopped with this. */
  sealedStateRejected: 'countersign.SealedStateRejected',
  /** Local mode: an approval wait ended because its execution was stopped. */
  aborted: 'countersign.Aborted',
  /** Step Functions' own: a task (the approval wait among them) ran out of time. */
  timeout: 'States.Timeout',
  /** An external run's webhook was not delivered this time (NotifyCaller retries it). */
  webhookFailed: 'countersign.webhook-failed',
} as const;

/**
 * The Pass state a catch goes through before MarkFailed, which records the state that failed
 * (`$.failedStep`): `ModelTurn failed`.
 *
 * @example
 * failedStateName(STATE_NAMES.modelTurn); // 'ModelTurn failed'
 */
export function failedStateName(stateName: StateName): string {
  return `${stateName} failed`;
}

/**
 * The errors a later attempt may not meet, so a run they failed may be redriven: a fault of
 * countersign's own steps after their retries (a throttled table, a KMS hiccup, a tool's
 * `TransientToolError`), a model
 * provider throttling or failing past its adapter's retries, and the Lambda service's and Step
 * Functions' own errors (a throttled or crashed invocation, a timed-out task, a failed
 * StartExecution). Every other error (a refusal, a conflict, a malformed reply, a definition
 * error) would be met again.
 */
const TRANSIENT_ERROR_NAMES: ReadonlySet<string> = new Set([
  ERROR_NAMES.internal,
  ERROR_NAMES.unavailable,
  stepErrorName('model-unavailable'),
  ERROR_NAMES.timeout,
  'States.TaskFailed',
  'Sandbox.Timedout',
]);

/**
 * Whether a step failure, by the error name the state machine caught, is transient.
 *
 * @example
 * isTransientStepFailure('Lambda.TooManyRequestsException'); // true
 * isTransientStepFailure('countersign.conflict'); // false
 */
export function isTransientStepFailure(errorName: string | undefined): boolean {
  if (errorName === undefined) return false;
  return TRANSIENT_ERROR_NAMES.has(errorName) || errorName.startsWith('Lambda.');
}

/**
 * The error name of a step failure with a `CountersignError` code.
 *
 * @example
 * stepErrorName('not-found'); // 'countersign.not-found'
 */
export function stepErrorName(code: string): string {
  return `${STEP_ERROR_PREFIX}${code}`;
}
