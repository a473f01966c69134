import type { LocalStepHandler } from '../../lambdas/local/local-state-machine-runner.js';

const FUNCTION_ARN = 'arn:aws:lambda:us-east-1:123456789012:function:';

/** A Lambda Task the way CDK writes it with `payloadResponseOnly: true`. */
function lambdaTask(name: string, parameters: Record<string, unknown>, next: string | undefined) {
  return {
    Type: 'Task',
    Resource: `${FUNCTION_ARN}${name}`,
    Parameters: parameters,
    TimeoutSeconds: 30,
    ...(next === undefined ? { End: true } : { Next: next }),
  };
}

const catchFailure = [{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'MarkFailed' }];
const runAndTurn = { 'runId.$': '$.runId', 'turn.$': '$.turn' };

/**
 * A small ASL with the state names and shapes of the synthesized countersign workflow
 * (lib/workflow.ts): execution input `{runId}`, a waitForTaskToken AwaitApproval with the
 * three catchers, and ContinueAsNew as a fire-and-forget startExecution.
 */
export function buildRunWorkflowDefinition(options: {
  approvalTimeoutSeconds: number;
}): Record<string, unknown> {
  return {
    StartAt: 'Prepare',
    States: {
      Prepare: {
        ...lambdaTask('Prepare', { 'runId.$': '$.runId', 'executionId.$': '$$.Execution.Id' }, 'Resume?'),
        Catch: catchFailure,
      },
      'Resume?': {
        Type: 'Choice',
        Choices: [{ Variable: '$.next', StringEquals: 'await', Next: 'AwaitApproval' }],
        Default: 'ModelTurn',
      },
      ModelTurn: { ...lambdaTask('ModelTurn', runAndTurn, 'Route'), Catch: catchFailure },
      Route: {
        Type: 'Choice',
        Choices: [
          { Variable: '$.route', StringEquals: 'tools', Next: 'ExecuteTools' },
          { Variable: '$.route', StringEquals: 'approval', Next: 'AwaitApproval' },
          { Variable: '$.route', StringEquals: 'continue', Next: 'ContinueAsNew' },
        ],
        Default: 'Finish',
      },
      AwaitApproval: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
        Parameters: {
          FunctionName: `${FUNCTION_ARN}AwaitApproval`,
          Payload: { ...runAndTurn, 'taskToken.$': '$$.Task.Token' },
        },
        TimeoutSeconds: options.approvalTimeoutSeconds,
        ResultPath: '$.decision',
        Next: 'ExecuteTools',
        Catch: [
          { ErrorEquals: ['countersign.Rejected'], ResultPath: '$.rejection', Next: 'RecordRejection' },
          { ErrorEquals: ['States.Timeout'], ResultPath: '$.timeout', Next: 'MarkExpired' },
          ...catchFailure,
        ],
      },
      ExecuteTools: {
        ...lambdaTask('ExecuteTools', { ...runAndTurn, 'state.$': '$' }, 'ModelTurn'),
        Catch: catchFailure,
      },
      RecordRejection: {
        ...lambdaTask('RecordRejection', { ...runAndTurn, 'rejection.$': '$.rejection' }, 'ModelTurn'),
        Catch: catchFailure,
      },
      Finish: { ...lambdaTask('Finish', { 'runId.$': '$.runId' }, 'Done'), Catch: catchFailure },
      ContinueAsNew: {
        Type: 'Task',
        Resource: 'arn:aws:states:::states:startExecution',
        Parameters: {
          'StateMachineArn.$': '$$.StateMachine.Id',
          Input: { 'runId.$': '$.runId', 'AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$': '$$.Execution.Id' },
          'Name.$': "States.Format('{}-{}', $.runId, $.turn)",
        },
        TimeoutSeconds: 60,
        Next: 'Done',
        Catch: catchFailure,
      },
      MarkFailed: lambdaTask('MarkFailed', { 'runId.$': '$.runId', 'failure.$': '$.failure' }, 'RunFailed'),
      MarkExpired: { ...lambdaTask('MarkExpired', runAndTurn, 'Expired'), Catch: catchFailure },
      Done: { Type: 'Succeed' },
      Expired: { Type: 'Succeed' },
      RunFailed: { Type: 'Fail', Error: 'countersign.RunFailed' },
    },
  };
}

export type StepName =
  | 'Prepare'
  | 'ModelTurn'
  | 'AwaitApproval'
  | 'ExecuteTools'
  | 'RecordRejection'
  | 'Finish'
  | 'MarkFailed'
  | 'MarkExpired';

export interface StepStubs {
  readonly handlers: Record<StepName, LocalStepHandler>;
  /** Every payload each step received, in order. */
  readonly calls: Record<StepName, Array<Record<string, unknown>>>;
  /** The task tokens AwaitApproval was handed, in order. */
  readonly taskTokens: string[];
}

/**
 * Stub step handlers keeping a turn counter per run. `routes` is the model's script:
 * each ModelTurn takes the next route (`final` when the script is used up).
 */
export function createStepStubs(options: {
  routes?: string[];
  failingStep?: { name: StepName; error: Error };
}): StepStubs {
  const routes = [...(options.routes ?? [])];
  const turns = new Map<string, number>();
  const calls = {
    Prepare: [],
    ModelTurn: [],
    AwaitApproval: [],
    ExecuteTools: [],
    RecordRejection: [],
    Finish: [],
    MarkFailed: [],
    MarkExpired: [],
  } as StepStubs['calls'];
  const taskTokens: string[] = [];
  const step =
    (name: StepName, respond: (payload: Record<string, unknown>) => unknown): LocalStepHandler =>
    async (payload: Record<string, unknown>) => {
      calls[name].push(payload);
      if (options.failingStep?.name === name) throw options.failingStep.error;
      return respond(payload);
    };
  const runIdOf = (payload: Record<string, unknown>): string => String(payload.runId);
  return {
    calls,
    taskTokens,
    handlers: {
      Prepare: step('Prepare', (payload) => ({
        runId: payload.runId,
        turn: turns.get(runIdOf(payload)) ?? 0,
        next: 'model',
      })),
      ModelTurn: step('ModelTurn', (payload) => {
        const turn = (turns.get(runIdOf(payload)) ?? 0) + 1;
        turns.set(runIdOf(payload), turn);
        return { runId: payload.runId, turn, route: routes.shift() ?? 'final' };
      }),
      AwaitApproval: step('AwaitApproval', (payload) => {
        taskTokens.push(String(payload.taskToken));
        return { sealed: true };
      }),
      ExecuteTools: step('ExecuteTools', (payload) => ({ runId: payload.runId, turn: payload.turn })),
      RecordRejection: step('RecordRejection', (payload) => ({ runId: payload.runId, turn: payload.turn })),
      Finish: step('Finish', () => ({ status: 'completed' })),
      MarkFailed: step('MarkFailed', () => ({ status: 'failed' })),
      MarkExpired: step('MarkExpired', () => ({ status: 'expired' })),
    },
  };
}
