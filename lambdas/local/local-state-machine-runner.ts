import { randomBytes } from 'node:crypto';
import {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  StateMachine,
  type StateMachineDefinition,
} from 'aws-local-stepfunctions';
import { ERROR_NAMES } from '../contract/state-names.js';
import { CountersignError } from '../core/errors.js';
import { type Logger, type RunExecutions, silentLogger } from '../core/ports.js';

/** Name of the local state machine, the last part of its ARN. */
export const LOCAL_STATE_MACHINE_NAME = 'countersign';
/** ARN of the local state machine (`$$.StateMachine.Id`). */
export const LOCAL_STATE_MACHINE_ARN = `arn:aws:states:local:000000000000:stateMachine:${LOCAL_STATE_MACHINE_NAME}`;
/** Prefix of every local execution ARN (`$$.Execution.Id`); the execution name follows. */
export const LOCAL_EXECUTION_ARN_PREFIX = `arn:aws:states:local:000000000000:execution:${LOCAL_STATE_MACHINE_NAME}:`;

/**
 * `$$.Task.Token` as the library sees it: it mints no tokens, so every Task state reads this
 * constant and the runner swaps it for a fresh token in the one step that waits for one.
 */
const TASK_TOKEN_PLACEHOLDER = 'countersign-local-task-token-placeholder';
/** Bytes of randomness in a task token: a bearer secret, as unguessable as a Step Functions one. */
const TASK_TOKEN_BYTES = 48;
/** Node timers overflow above 2^31-1 ms (about 24.8 days) and then fire at once. */
const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);
/** aws-local-stepfunctions applies this to a Task without TimeoutSeconds (Step Functions: none). */
const LIBRARY_DEFAULT_TASK_TIMEOUT_SECONDS = 60;
const LAMBDA_INVOKE_RESOURCE = /^arn:[a-z-]+:states:::lambda:invoke$/;
const WAIT_FOR_TASK_TOKEN_SUFFIX = '.waitForTaskToken';
const START_EXECUTION_RESOURCE = /^arn:[a-z-]+:states:::states:startExecution(\.sync(:2)?)?$/;
/** Characters Step Functions refuses in an execution name (control characters are checked apart). */
const RESERVED_EXECUTION_NAME_CHARACTERS = /[\s<>{}[\]?*"#%\\^|~`$&,;:/]/;

/**
 * A step's Lambda handler, called with the payload the state passes to its function.
 * `any`, because each handler declares its own event type and this table holds them all.
 */
// biome-ignore lint/suspicious/noExplicitAny: handlers declare their own event types.
export type LocalStepHandler = (input: any) => Promise<unknown>;

export interface LocalStateMachineRunnerOptions {
  /** The ASL synthesized from the CDK app (JSONPath; JSONata is refused). */
  readonly definition: Record<string, unknown>;
  /** Lambda handlers keyed by Task STATE name (Prepare, ModelTurn, AwaitApproval, ...). */
  readonly stepHandlers: Readonly<Record<string, LocalStepHandler>>;
  /**
   * Where execution outcomes and definition caveats go. Never receives tokens or payloads.
   * @default - a silent logger
   */
  readonly logger?: Logger;
}

type TaskKind = 'lambda-invoke' | 'wait-for-task-token' | 'start-execution' | 'direct';

interface TaskPlan {
  readonly stateName: string;
  readonly kind: TaskKind;
  /** The payload is `{FunctionName, Payload}`: the handler gets `Payload`. */
  readonly unwrapsLambdaPayload: boolean;
  readonly timeoutSeconds?: number;
  readonly timeoutSecondsPath?: string;
}

interface RunningExecution {
  readonly executionName: string;
  readonly runId: string;
  readonly abort: () => void;
  /** Approval waits whose handler returned and that now wait for `resume`. */
  parkedApprovals: number;
  /**
   * When the first approval wait of this execution must end (epoch ms): a wait re-entered
   * after a restart keeps its card's deadline instead of starting a whole timeout again.
   */
  approvalDeadline?: number;
  settled?: Promise<void>;
}

type ApprovalDecision = { kind: 'approve' } | { kind: 'reject'; reason?: string };

interface PendingApproval {
  readonly execution: RunningExecution;
  readonly deliver: (decision: ApprovalDecision) => void;
  readonly cancel: () => void;
  readonly expiryTimer: NodeJS.Timeout;
  parked: boolean;
}

/**
 * Runs the countersign state machine inside this process on aws-local-stepfunctions, with
 * the same Lambda handlers the deployed machine invokes. Implements the `RunExecutions` port
 * the API uses, so `start` and `resume` behave like StartExecution and
 * SendTaskSuccess/SendTaskFailure: idempotent names, single-use task tokens, the approval
 * timeout ending in `States.Timeout`, and `ContinueAsNew` starting a fresh execution.
 *
 * What the library lacks is supplied here: it mints neither `$$.Execution.Id` nor
 * `$$.Task.Token` (the runner builds the context and mints a token per approval visit),
 * it caps a Task without TimeoutSeconds at 60 s, overflows on timeouts above ~24.8 days,
 * ignores HeartbeatSeconds and JSONata. The constructor refuses what would silently
 * misbehave and logs a warning for the rest.
 *
 * @example
 * const runner = new LocalStateMachineRunner({ definition, stepHandlers: { Prepare: prepareHandler, ... } });
 * await runner.start({ runId, executionName: runId });
 * // ... the AwaitApproval handler sealed a token; the decision API later calls:
 * await runner.resume(taskToken, { kind: 'approve' }); // { kind: 'delivered' }
 */
export class LocalStateMachineRunner implements RunExecutions {
  private readonly machine: StateMachine;
  private readonly stepHandlers: Readonly<Record<string, LocalStepHandler>>;
  private readonly taskPlans: readonly TaskPlan[];
  private readonly logger: Logger;
  private readonly runningExecutions = new Map<string, RunningExecution>();
  private readonly finishedExecutionNames = new Set<string>();
  private readonly pendingApprovals = new Map<string, PendingApproval>();
  private idleWaiters: Array<() => void> = [];
  private stopped = false;

  public constructor(options: LocalStateMachineRunnerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.stepHandlers = options.stepHandlers;
    const definition = options.definition as unknown as StateMachineDefinition;
    refuseJsonata(options.definition);
    this.taskPlans = planTasks(options.definition, this.logger);
    for (const plan of this.taskPlans) {
      if (plan.kind !== 'start-execution' && typeof this.stepHandlers[plan.stateName] !== 'function') {
        throw new CountersignError(
          'configuration',
          `The state machine has a Task state "${plan.stateName}" but no step handler is registered for it.`,
        );
      }
    }
    this.machine = new StateMachine(definition, { validationOptions: { checkArn: false } });
  }

  /**
   * Starts an execution in the background; a name that is already running is a no-op.
   * `approvalDeadline` bounds the execution's first approval wait (a run re-entering the wait
   * it was in before a restart): at that moment the wait fails with `States.Timeout`.
   */
  public async start(input: {
    runId: string;
    executionName: string;
    approvalDeadline?: Date;
  }): Promise<void> {
    const execution = this.startExecution(input.runId, input.executionName);
    if (input.approvalDeadline) execution.approvalDeadline = input.approvalDeadline.getTime();
  }

  /**
   * Resumes the execution waiting on `taskToken`. A token is single-use: unknown, used and
   * timed-out tokens all answer `token-spent`.
   */
  public async resume(
    taskToken: string,
    decision: ApprovalDecision,
  ): Promise<{ kind: 'delivered' } | { kind: 'token-spent' }> {
    const pending = this.releaseApproval(taskToken);
    if (!pending) return { kind: 'token-spent' };
    pending.deliver(decision);
    return { kind: 'delivered' };
  }

  /**
   * StopExecution: aborts the run's executions (the named one and any other of the run) and
   * spends its task tokens, so a late decision finds them gone. Already ended is no error.
   */
  public async stopExecution(input: {
    runId: string;
    executionId?: string;
    because?: 'cancelled' | 'sealed-state-rejected';
  }): Promise<void> {
    // Every execution of the run: a continued-as-new one may not have recorded its id yet.
    const executions = [...this.runningExecutions.values()].filter(
      (execution) =>
        execution.runId === input.runId ||
        `${LOCAL_EXECUTION_ARN_PREFIX}${execution.executionName}` === input.executionId,
    );
    for (const [token, pending] of [...this.pendingApprovals]) {
      if (!executions.includes(pending.execution)) continue;
      this.releaseApproval(token);
      pending.cancel();
    }
    for (const execution of executions) execution.abort();
    await Promise.allSettled(executions.map((execution) => execution.settled));
  }

  /** Aborts every running execution (process shutdown, tests) and refuses later starts. */
  public async stop(): Promise<void> {
    this.stopped = true;
    for (const [token, pending] of [...this.pendingApprovals]) {
      this.releaseApproval(token);
      pending.cancel();
    }
    const executions = [...this.runningExecutions.values()];
    for (const execution of executions) execution.abort();
    await Promise.allSettled(executions.map((execution) => execution.settled));
  }

  /** Resolves once every running execution is parked at an approval wait (or none runs). */
  public idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
    });
  }

  /** Executions started and not yet ended, including those waiting for a decision. */
  public runningCount(): number {
    return this.runningExecutions.size;
  }

  private startExecution(runId: string, executionName: string): RunningExecution {
    if (this.stopped) {
      throw new CountersignError('internal', 'The local state machine runner was stopped.');
    }
    if (typeof runId !== 'string' || runId.length === 0) {
      throw new CountersignError('internal', 'An execution needs a non-empty run id.');
    }
    if (!isValidExecutionName(executionName)) {
      throw new CountersignError(
        'internal',
        'The execution name is not valid for Step Functions (1-80 characters, no whitespace or reserved characters).',
      );
    }
    const running = this.runningExecutions.get(executionName);
    if (running) return running;
    if (this.finishedExecutionNames.has(executionName)) {
      // Step Functions answers ExecutionAlreadyExists for a closed execution's name.
      throw new CountersignError('conflict', 'An execution with this name already ran.');
    }

    const executionId = `${LOCAL_EXECUTION_ARN_PREFIX}${executionName}`;
    const input = { runId };
    let abortRun: () => void = () => {};
    const execution: RunningExecution = {
      executionName,
      runId,
      abort: () => abortRun(),
      parkedApprovals: 0,
    };
    this.runningExecutions.set(executionName, execution);
    const { abort, result } = this.machine.run(input, {
      overrides: { taskResourceLocalHandlers: this.buildTaskHandlers(execution) },
      context: {
        Execution: {
          Id: executionId,
          Name: executionName,
          Input: input,
          StartTime: new Date().toISOString(),
        },
        StateMachine: { Id: LOCAL_STATE_MACHINE_ARN, Name: LOCAL_STATE_MACHINE_NAME },
        Task: { Token: TASK_TOKEN_PLACEHOLDER },
      },
    });
    abortRun = abort;
    this.logger.info('execution-started', { runId, executionName });
    execution.settled = result
      .then(
        () => this.logger.info('execution-succeeded', { runId, executionName }),
        (error: unknown) => this.logExecutionFailure(execution, error),
      )
      .finally(() => {
        this.runningExecutions.delete(executionName);
        this.finishedExecutionNames.add(executionName);
        this.notifyIdleWaiters();
      });
    return execution;
  }

  private buildTaskHandlers(
    execution: RunningExecution,
  ): Record<string, (input: unknown) => Promise<NonNullable<unknown> | null>> {
    const handlers: Record<string, (input: unknown) => Promise<NonNullable<unknown> | null>> = {};
    for (const plan of this.taskPlans) {
      handlers[plan.stateName] = (input) => {
        switch (plan.kind) {
          case 'start-execution':
            return this.continueAsNew(input);
          case 'wait-for-task-token':
            return this.waitForTaskToken(plan, execution, input);
          default:
            return this.invokeStep(plan, input);
        }
      };
    }
    return handlers;
  }

  private async invokeStep(plan: TaskPlan, input: unknown): Promise<NonNullable<unknown> | null> {
    const payload = plan.unwrapsLambdaPayload ? readLambdaPayload(input) : input;
    const output = await this.callStepHandler(plan.stateName, payload);
    // lambda:invoke answers with the invocation response; the definition selects `$.Payload`.
    if (plan.kind === 'lambda-invoke')
      return { ExecutedVersion: '$LATEST', Payload: output, StatusCode: 200 };
    return output;
  }

  private async waitForTaskToken(
    plan: TaskPlan,
    execution: RunningExecution,
    input: unknown,
  ): Promise<NonNullable<unknown> | null> {
    // Synchronously, before the library arms its own timer of the same length: this one
    // fires first, so a token is spent by the time the task fails with States.Timeout.
    const timeoutSeconds = resolveTimeoutSeconds(plan, input);
    // A re-entered wait ends at its card's deadline, which is sooner than a fresh timeout.
    const deadline = execution.approvalDeadline;
    execution.approvalDeadline = undefined;
    const remainingMs = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
    const cutShort = remainingMs !== undefined && remainingMs < timeoutSeconds * 1000;
    const taskToken = randomBytes(TASK_TOKEN_BYTES).toString('base64url');
    const decision = createDeferred<NonNullable<unknown>>();
    // A decision may settle the wait before anyone awaits it; that is no unhandled rejection.
    decision.promise.catch(() => {});
    const pending: PendingApproval = {
      execution,
      parked: false,
      deliver: (outcome) => {
        if (outcome.kind === 'approve') decision.resolve({ decision: 'approve' });
        else decision.reject(createRejectedError(outcome.reason));
      },
      cancel: () => decision.reject(createStepError(ERROR_NAMES.aborted, 'The execution was stopped.')),
      // Expiry does not settle the wait: the library's timer fails the task with States.Timeout.
      // A wait cut short by its card's deadline ends before that timer, so it fails itself.
      expiryTimer: setTimeout(
        () => {
          if (this.releaseApproval(taskToken) && cutShort) {
            decision.reject(createStepError(ERROR_NAMES.timeout, 'The approval wait timed out.'));
          }
        },
        cutShort ? remainingMs : timeoutSeconds * 1000,
      ).unref(),
    };
    // Registered before the handler runs: it stores the card, and a decision may arrive
    // before the handler has returned.
    this.pendingApprovals.set(taskToken, pending);
    try {
      const payload = replaceTaskTokenPlaceholder(input, taskToken);
      await this.callStepHandler(
        plan.stateName,
        plan.unwrapsLambdaPayload ? readLambdaPayload(payload) : payload,
      );
    } catch (error) {
      this.releaseApproval(taskToken);
      throw error;
    }
    if (this.pendingApprovals.get(taskToken) === pending) {
      pending.parked = true;
      execution.parkedApprovals += 1;
      this.notifyIdleWaiters();
    }
    return decision.promise;
  }

  private async continueAsNew(input: unknown): Promise<NonNullable<unknown>> {
    const request = isRecord(input) ? input : {};
    const childInput = typeof request.Input === 'string' ? safeParseJson(request.Input) : request.Input;
    const runId = isRecord(childInput) ? childInput.runId : undefined;
    const turn = isRecord(childInput) ? childInput.turn : undefined;
    if (typeof runId !== 'string' || (typeof request.Name !== 'string' && turn === undefined)) {
      throw createStepError('States.Runtime', 'ContinueAsNew needs Input.runId and a Name or Input.turn.');
    }
    const executionName = typeof request.Name === 'string' ? request.Name : `${runId}-${String(turn)}`;
    try {
      this.startExecution(runId, executionName);
    } catch (error) {
      throw createStepError(
        'StepFunctions.ExecutionAlreadyExistsException',
        error instanceof CountersignError ? error.message : 'The execution could not be started.',
      );
    }
    return {
      ExecutionArn: `${LOCAL_EXECUTION_ARN_PREFIX}${executionName}`,
      StartDate: new Date().toISOString(),
    };
  }

  private async callStepHandler(stateName: string, payload: unknown): Promise<NonNullable<unknown> | null> {
    const handler = this.stepHandlers[stateName];
    if (!handler) throw createStepError('States.Runtime', `No step handler for state ${stateName}.`);
    try {
      const output = await handler(payload);
      // A Lambda that returns nothing hands Step Functions `null`.
      return output === undefined ? null : output;
    } catch (error) {
      // The library matches Retry and Catch on `error.name`, as Step Functions matches errorType.
      if (error instanceof Error && error.name) throw error;
      throw createStepError('Error', 'The step handler threw a value that is not an Error.');
    }
  }

  /** Takes a token out of play; answers the wait it belonged to, if it was still open. */
  private releaseApproval(taskToken: string): PendingApproval | undefined {
    const pending = this.pendingApprovals.get(taskToken);
    if (!pending) return undefined;
    this.pendingApprovals.delete(taskToken);
    clearTimeout(pending.expiryTimer);
    if (pending.parked) {
      pending.parked = false;
      pending.execution.parkedApprovals -= 1;
    }
    this.notifyIdleWaiters();
    return pending;
  }

  private isIdle(): boolean {
    for (const execution of this.runningExecutions.values()) {
      if (execution.parkedApprovals === 0) return false;
    }
    return true;
  }

  private notifyIdleWaiters(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Names and error class only: a failure's message may quote a payload or a token. */
  private logExecutionFailure(execution: RunningExecution, error: unknown): void {
    const fields = { runId: execution.runId, executionName: execution.executionName };
    if (error instanceof ExecutionAbortedError) {
      this.logger.info('execution-aborted', fields);
    } else if (error instanceof ExecutionTimeoutError) {
      this.logger.error('execution-timed-out', fields);
    } else if (error instanceof ExecutionError) {
      const cause = error.cause instanceof Error ? error.cause.name : 'Unknown';
      this.logger.error('execution-failed', { ...fields, error: cause });
    } else {
      this.logger.error('execution-crashed', {
        ...fields,
        error: error instanceof Error ? error.name : typeof error,
      });
    }
  }
}

/** Step Functions execution names: 1-80 characters, no whitespace, reserved or control characters. */
function isValidExecutionName(name: unknown): name is string {
  if (typeof name !== 'string' || name.length < 1 || name.length > 80) return false;
  if (RESERVED_EXECUTION_NAME_CHARACTERS.test(name)) return false;
  for (const character of name) {
    const code = character.codePointAt(0) ?? 0;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return false;
  }
  return true;
}

function createDeferred<T>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (reason: Error) => void;
} {
  let resolve: (value: T) => void = () => {};
  let reject: (reason: Error) => void = () => {};
  const promise = new Promise<T>((resolvePromise, rejectPromise) => {
    resolve = resolvePromise;
    reject = rejectPromise;
  });
  return { promise, resolve, reject };
}

function createStepError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

/** SendTaskFailure(error: countersign.Rejected, cause: reason): the Catch routes to RecordRejection. */
function createRejectedError(reason: string | undefined): Error {
  return createStepError(ERROR_NAMES.rejected, reason ?? 'The approver rejected the pending calls.');
}

function readLambdaPayload(input: unknown): unknown {
  return isRecord(input) && 'Payload' in input ? input.Payload : {};
}

function replaceTaskTokenPlaceholder(value: unknown, taskToken: string): unknown {
  if (value === TASK_TOKEN_PLACEHOLDER) return taskToken;
  if (Array.isArray(value)) return value.map((item) => replaceTaskTokenPlaceholder(item, taskToken));
  if (isRecord(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, replaceTaskTokenPlaceholder(item, taskToken)]),
    );
  }
  return value;
}

function resolveTimeoutSeconds(plan: TaskPlan, input: unknown): number {
  if (plan.timeoutSeconds !== undefined) return plan.timeoutSeconds;
  if (plan.timeoutSecondsPath !== undefined) {
    const value = readSimpleJsonPath(plan.timeoutSecondsPath, input);
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMER_SECONDS) {
      throw createStepError(
        'States.Runtime',
        `TimeoutSecondsPath of ${plan.stateName} must give an integer from 1 to ${MAX_TIMER_SECONDS}.`,
      );
    }
    return value;
  }
  return LIBRARY_DEFAULT_TASK_TIMEOUT_SECONDS;
}

function readSimpleJsonPath(jsonPath: string, value: unknown): unknown {
  let current = value;
  for (const key of jsonPath.split('.').slice(1)) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function safeParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function refuseJsonata(definition: Record<string, unknown>): void {
  if (JSON.stringify(definition).includes('"QueryLanguage":"JSONata"')) {
    throw new CountersignError(
      'configuration',
      'The state machine uses JSONata, which aws-local-stepfunctions silently ignores; local mode needs JSONPath.',
    );
  }
}

/** Classifies every Task state (nested Parallel and Map states too: overrides are keyed by name). */
function planTasks(definition: Record<string, unknown>, logger: Logger): TaskPlan[] {
  const plans: TaskPlan[] = [];
  const visit = (machine: unknown): void => {
    if (!isRecord(machine) || !isRecord(machine.States)) return;
    for (const [stateName, state] of Object.entries(machine.States)) {
      if (!isRecord(state)) continue;
      if (Array.isArray(state.Branches)) for (const branch of state.Branches) visit(branch);
      visit(state.Iterator);
      visit(state.ItemProcessor);
      if (state.Type === 'Task') plans.push(planTask(stateName, state, logger));
    }
  };
  visit(definition);
  return plans;
}

function planTask(stateName: string, state: Record<string, unknown>, logger: Logger): TaskPlan {
  const resource = typeof state.Resource === 'string' ? state.Resource : '';
  const timeout = readTimeout(stateName, state);
  if ('HeartbeatSeconds' in state || 'HeartbeatSecondsPath' in state) {
    logger.warn('local-heartbeat-ignored', { stateName });
  }
  const startExecution = START_EXECUTION_RESOURCE.exec(resource);
  if (startExecution) {
    if (startExecution[1]) {
      throw new CountersignError(
        'configuration',
        `State "${stateName}" waits for a child execution (${resource}); local mode supports only the fire-and-forget startExecution.`,
      );
    }
    return { stateName, kind: 'start-execution', unwrapsLambdaPayload: false, ...timeout };
  }
  if (resource.endsWith(WAIT_FOR_TASK_TOKEN_SUFFIX)) {
    if (!JSON.stringify(state.Parameters ?? null).includes('$$.Task.Token')) {
      throw new CountersignError(
        'configuration',
        `State "${stateName}" waits for a task token but its Parameters never pass $$.Task.Token.`,
      );
    }
    if (timeout.timeoutSeconds === undefined && timeout.timeoutSecondsPath === undefined) {
      throw new CountersignError(
        'configuration',
        `State "${stateName}" waits for a task token without TimeoutSeconds; aws-local-stepfunctions would end the wait after ${LIBRARY_DEFAULT_TASK_TIMEOUT_SECONDS} s.`,
      );
    }
    const waitedResource = resource.slice(0, -WAIT_FOR_TASK_TOKEN_SUFFIX.length);
    return {
      stateName,
      kind: 'wait-for-task-token',
      unwrapsLambdaPayload: LAMBDA_INVOKE_RESOURCE.test(waitedResource),
      ...timeout,
    };
  }
  if (timeout.timeoutSeconds === undefined && timeout.timeoutSecondsPath === undefined) {
    logger.warn('local-task-timeout-defaulted', {
      stateName,
      timeoutSeconds: LIBRARY_DEFAULT_TASK_TIMEOUT_SECONDS,
    });
  }
  if (LAMBDA_INVOKE_RESOURCE.test(resource)) {
    return { stateName, kind: 'lambda-invoke', unwrapsLambdaPayload: true, ...timeout };
  }
  return { stateName, kind: 'direct', unwrapsLambdaPayload: false, ...timeout };
}

function readTimeout(
  stateName: string,
  state: Record<string, unknown>,
): { timeoutSeconds?: number; timeoutSecondsPath?: string } {
  if (state.TimeoutSeconds !== undefined) {
    const seconds = state.TimeoutSeconds;
    if (
      typeof seconds !== 'number' ||
      !Number.isInteger(seconds) ||
      seconds < 1 ||
      seconds > MAX_TIMER_SECONDS
    ) {
      throw new CountersignError(
        'configuration',
        `TimeoutSeconds of state "${stateName}" is ${String(seconds)}; local mode supports 1 to ${MAX_TIMER_SECONDS} (Node timers overflow at ~24.8 days).`,
      );
    }
    return { timeoutSeconds: seconds };
  }
  if (state.TimeoutSecondsPath !== undefined) {
    const jsonPath = state.TimeoutSecondsPath;
    if (typeof jsonPath !== 'string' || !/^\$(\.[A-Za-z0-9_]+)+$/.test(jsonPath)) {
      throw new CountersignError(
        'configuration',
        `TimeoutSecondsPath of state "${stateName}" must be a plain path like $.timeoutSeconds in local mode.`,
      );
    }
    return { timeoutSecondsPath: jsonPath };
  }
  return {};
}
