import {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  StateMachine,
  type StateMachineDefinition,
} from 'aws-local-stepfunctions';
import { CountersignError } from '../core/errors.js';
import { type Logger, type RunExecutions, silentLogger } from '../core/ports.js';
import {
  createStepError,
  isRecord,
  planTasks,
  resolveTimeoutSeconds,
  type TaskPlan,
} from './asl-task-plan.js';
import {
  type ApprovalDecision,
  replaceTaskTokenPlaceholder,
  TASK_TOKEN_PLACEHOLDER,
  TaskTokenBroker,
} from './task-token-broker.js';

/** Name of the local state machine, the last part of its ARN. */
export const LOCAL_STATE_MACHINE_NAME = 'countersign';
/** ARN of the local state machine (`$$.StateMachine.Id`). */
export const LOCAL_STATE_MACHINE_ARN = `arn:aws:states:local:000000000000:stateMachine:${LOCAL_STATE_MACHINE_NAME}`;
/** Prefix of every local execution ARN (`$$.Execution.Id`); the execution name follows. */
export const LOCAL_EXECUTION_ARN_PREFIX = `arn:aws:states:local:000000000000:execution:${LOCAL_STATE_MACHINE_NAME}:`;

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

interface RunningExecution {
  readonly executionName: string;
  readonly runId: string;
  readonly abort: () => void;
  /**
   * When the first approval wait of this execution must end (epoch ms): a wait re-entered
   * after a restart keeps its card's deadline instead of starting a whole timeout again.
   */
  approvalDeadline?: number;
  settled?: Promise<void>;
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
  private readonly taskTokens = new TaskTokenBroker<RunningExecution>(() => this.notifyIdleWaiters());
  private idleWaiters: Array<() => void> = [];
  private stopped = false;

  public constructor(options: LocalStateMachineRunnerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.stepHandlers = options.stepHandlers;
    const definition = options.definition as unknown as StateMachineDefinition;
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
   * Starts an execution in the background; a name that is already running, or already ran, is a no-op.
   * `approvalDeadline` bounds the execution's first approval wait (a run re-entering the wait
   * it was in before a restart): at that moment the wait fails with `States.Timeout`.
   */
  public async start(input: {
    runId: string;
    executionName: string;
    approvalDeadline?: Date;
  }): Promise<void> {
    // As StepFunctionsRunExecutions: a name that already ran answers ExecutionAlreadyExists,
    // which a repeated start (a redrive asked for again) takes as done.
    if (this.finishedExecutionNames.has(input.executionName)) return;
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
    return this.taskTokens.deliver(taskToken, decision) ? { kind: 'delivered' } : { kind: 'token-spent' };
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
    this.taskTokens.stopWaits((execution) => executions.includes(execution));
    for (const execution of executions) execution.abort();
    await Promise.allSettled(executions.map((execution) => execution.settled));
  }

  /** Aborts every running execution (process shutdown, tests) and refuses later starts. */
  public async stop(): Promise<void> {
    this.stopped = true;
    this.taskTokens.stopWaits(() => true);
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
    const { taskToken, decision } = this.taskTokens.open(execution, {
      expiresInMilliseconds: cutShort ? remainingMs : timeoutSeconds * 1000,
      failsAtExpiry: cutShort,
    });
    // Opened before the handler runs: it stores the card, and a decision may arrive before the
    // handler has returned.
    try {
      const payload = replaceTaskTokenPlaceholder(input, taskToken);
      await this.callStepHandler(
        plan.stateName,
        plan.unwrapsLambdaPayload ? readLambdaPayload(payload) : payload,
      );
    } catch (error) {
      this.taskTokens.withdraw(taskToken);
      throw error;
    }
    this.taskTokens.park(taskToken);
    return decision;
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

  private isIdle(): boolean {
    for (const execution of this.runningExecutions.values()) {
      if (this.taskTokens.parkedWaitsOf(execution) === 0) return false;
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

function readLambdaPayload(input: unknown): unknown {
  return isRecord(input) && 'Payload' in input ? input.Payload : {};
}

function safeParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
