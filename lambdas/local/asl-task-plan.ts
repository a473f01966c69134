import { CountersignError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';

/**
 * How the local runner treats each Task state of an ASL definition, read once from the
 * definition: what aws-local-stepfunctions would silently get wrong is refused or warned of here.
 */

/** Node timers overflow above 2^31-1 ms (about 24.8 days) and then fire at once. */
export const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);
/** aws-local-stepfunctions applies this to a Task without TimeoutSeconds (Step Functions: none). */
export const LIBRARY_DEFAULT_TASK_TIMEOUT_SECONDS = 60;
const LAMBDA_INVOKE_RESOURCE = /^arn:[a-z-]+:states:::lambda:invoke$/;
const WAIT_FOR_TASK_TOKEN_SUFFIX = '.waitForTaskToken';
const START_EXECUTION_RESOURCE = /^arn:[a-z-]+:states:::states:startExecution(\.sync(:2)?)?$/;

export type TaskKind = 'lambda-invoke' | 'wait-for-task-token' | 'start-execution' | 'direct';

export interface TaskPlan {
  readonly stateName: string;
  readonly kind: TaskKind;
  /** The payload is `{FunctionName, Payload}`: the handler gets `Payload`. */
  readonly unwrapsLambdaPayload: boolean;
  readonly timeoutSeconds?: number;
  readonly timeoutSecondsPath?: string;
}

/**
 * Classifies every Task state (nested Parallel and Map states too: overrides are keyed by
 * name). Refuses JSONata, a wait for a child execution, a token wait without a token or a
 * timeout, and timeouts a Node timer cannot hold; warns of ignored heartbeats and defaulted timeouts.
 *
 * @example
 * const plans = planTasks(definition, logger); // [{ stateName: 'Prepare', kind: 'lambda-invoke', ... }, ...]
 */
export function planTasks(definition: Record<string, unknown>, logger: Logger): TaskPlan[] {
  refuseJsonata(definition);
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

/** The seconds a Task may run: its TimeoutSeconds, its TimeoutSecondsPath read from the input, or the library's default. */
export function resolveTimeoutSeconds(plan: TaskPlan, input: unknown): number {
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

/** An error the library routes on by `name`, as Step Functions routes on the error name. */
export function createStepError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readSimpleJsonPath(jsonPath: string, value: unknown): unknown {
  let current = value;
  for (const key of jsonPath.split('.').slice(1)) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

function refuseJsonata(definition: Record<string, unknown>): void {
  if (JSON.stringify(definition).includes('"QueryLanguage":"JSONata"')) {
    throw new CountersignError(
      'configuration',
      'The state machine uses JSONata, which aws-local-stepfunctions silently ignores; local mode needs JSONPath.',
    );
  }
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
