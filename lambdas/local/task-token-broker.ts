import { randomBytes } from 'node:crypto';
import { ERROR_NAMES } from '../contract/state-names.js';
import { createStepError, isRecord } from './asl-task-plan.js';

/**
 * `$$.Task.Token` as aws-local-stepfunctions sees it: it mints no tokens, so every Task state
 * reads this constant and the broker swaps it for a fresh token in the one step that waits for one.
 */
export const TASK_TOKEN_PLACEHOLDER = 'countersign-local-task-token-placeholder';
/** Bytes of randomness in a task token: a bearer secret, as unguessable as a Step Functions one. */
const TASK_TOKEN_BYTES = 48;

/** What a decision sends to a waiting task: SendTaskSuccess, or SendTaskFailure with a reason. */
export type ApprovalDecision = { kind: 'approve' } | { kind: 'reject'; reason?: string };

interface PendingWait<Execution> {
  readonly execution: Execution;
  readonly decision: PromiseWithResolvers<NonNullable<unknown>>;
  readonly expiryTimer: NodeJS.Timeout;
  /** The wait's handler has returned: only a decision, a stop or the expiry ends it now. */
  parked: boolean;
}

/**
 * The task tokens of local mode's waits (`.waitForTaskToken`), as Step Functions keeps them:
 * each is minted for one wait, single-use, and out of play once the wait is decided, stopped
 * or expired. `Execution` is whatever the runner identifies an execution by.
 *
 * @example
 * const broker = new TaskTokenBroker<RunningExecution>(() => runner.notifyIdleWaiters());
 * const { taskToken, decision } = broker.open(execution, { expiresInMilliseconds: 60_000, failsAtExpiry: false });
 * broker.deliver(taskToken, { kind: 'approve' }); // true; `decision` resolves { decision: 'approve' }
 */
export class TaskTokenBroker<Execution> {
  private readonly waits = new Map<string, PendingWait<Execution>>();

  /** @param changed - called whenever a wait parks or leaves, so the runner can tell when it is idle */
  public constructor(private readonly changed: () => void) {}

  /**
   * Mints the token of a new wait. At expiry the token leaves play; `failsAtExpiry` also fails
   * the wait with `States.Timeout` (a wait cut short by its card's deadline ends before the
   * library's own timer, which otherwise fails the task).
   */
  public open(
    execution: Execution,
    expiry: { expiresInMilliseconds: number; failsAtExpiry: boolean },
  ): { taskToken: string; decision: Promise<NonNullable<unknown>> } {
    const taskToken = randomBytes(TASK_TOKEN_BYTES).toString('base64url');
    const decision = Promise.withResolvers<NonNullable<unknown>>();
    // A decision may settle the wait before anyone awaits it; that is no unhandled rejection.
    decision.promise.catch(() => {});
    const expiryTimer = setTimeout(() => {
      if (this.release(taskToken) && expiry.failsAtExpiry) {
        decision.reject(createStepError(ERROR_NAMES.timeout, 'The approval wait timed out.'));
      }
    }, expiry.expiresInMilliseconds).unref();
    this.waits.set(taskToken, { execution, decision, expiryTimer, parked: false });
    return { taskToken, decision: decision.promise };
  }

  /** The wait's handler returned: the wait now only waits (if it is still open). */
  public park(taskToken: string): void {
    const wait = this.waits.get(taskToken);
    if (!wait) return;
    wait.parked = true;
    this.changed();
  }

  /** SendTaskSuccess / SendTaskFailure: false when the token is unknown, used or expired. */
  public deliver(taskToken: string, outcome: ApprovalDecision): boolean {
    const wait = this.release(taskToken);
    if (!wait) return false;
    if (outcome.kind === 'approve') wait.decision.resolve({ decision: 'approve' });
    // SendTaskFailure(error: countersign.Rejected, cause: reason): the Catch routes to RecordRejection.
    else
      wait.decision.reject(
        createStepError(ERROR_NAMES.rejected, outcome.reason ?? 'The approver rejected the pending calls.'),
      );
    return true;
  }

  /** Takes a token out of play without settling its wait (its handler failed). */
  public withdraw(taskToken: string): void {
    this.release(taskToken);
  }

  /** StopExecution: spends the tokens of the executions `stopped` names and fails their waits. */
  public stopWaits(stopped: (execution: Execution) => boolean): void {
    for (const [taskToken, wait] of [...this.waits]) {
      if (!stopped(wait.execution)) continue;
      this.release(taskToken);
      wait.decision.reject(createStepError(ERROR_NAMES.aborted, 'The execution was stopped.'));
    }
  }

  /** How many of an execution's waits are parked. */
  public parkedWaitsOf(execution: Execution): number {
    let parked = 0;
    for (const wait of this.waits.values()) if (wait.execution === execution && wait.parked) parked += 1;
    return parked;
  }

  private release(taskToken: string): PendingWait<Execution> | undefined {
    const wait = this.waits.get(taskToken);
    if (!wait) return undefined;
    this.waits.delete(taskToken);
    clearTimeout(wait.expiryTimer);
    this.changed();
    return wait;
  }
}

/** The step's input with the placeholder token replaced by the wait's own. */
export function replaceTaskTokenPlaceholder(value: unknown, taskToken: string): unknown {
  if (value === TASK_TOKEN_PLACEHOLDER) return taskToken;
  if (Array.isArray(value)) return value.map((item) => replaceTaskTokenPlaceholder(item, taskToken));
  if (isRecord(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, replaceTaskTokenPlaceholder(item, taskToken)]),
    );
  }
  return value;
}
