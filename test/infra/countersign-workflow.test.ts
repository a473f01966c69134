import { Duration } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { StateMachine } from 'aws-local-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ERROR_NAMES,
  failedStateName,
  STATE_NAMES,
  type StateName,
} from '../../lambdas/contract/state-names.js';
import type { RunDependencies } from '../../lambdas/core/run-dependencies.js';
import { MAXIMUM_TOOL_ATTEMPTS } from '../../lambdas/core/runs/call-ledger.js';
import { createStepHandlers } from '../../lambdas/handlers/step-handlers.js';
import { extractStateMachineDefinition } from '../../lib/state-machine-definition.js';
import { definitionStatesOf, type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

type Handler = (input: Record<string, unknown>) => Promise<Record<string, unknown>>;

describe('Countersign workflow', () => {
  let synthesized: SynthesizedStack;
  let definition: Record<string, unknown>;
  let states: Record<string, Record<string, unknown>>;
  beforeAll(() => {
    synthesized = synthesizeTestStack();
    definition = extractStateMachineDefinition(synthesized.template.toJSON());
    states = definitionStatesOf(definition);
  });

  it('is a Standard, traced state machine that logs without execution data', () => {
    // Act
    const stateMachines = synthesized.template.findResources('AWS::StepFunctions::StateMachine');

    // Assess
    expect(Object.keys(stateMachines)).toHaveLength(1);
    synthesized.template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: Match.objectLike({ IncludeExecutionData: false, Level: 'ALL' }),
    });
  });

  it('uses JSONPath only', () => {
    // Act
    const languages = Object.values(states).map((state) => state.QueryLanguage);

    // Assess
    expect(definition.QueryLanguage ?? 'JSONPath').toBe('JSONPath');
    expect(languages.filter((language) => language !== undefined && language !== 'JSONPath')).toEqual([]);
  });

  it('waits 7 days for an approval by default and the configured time otherwise', () => {
    // Prepare
    const configured = synthesizeTestStack({ countersign: { approvalTimeout: Duration.hours(36) } });

    // Act
    const defaultTimeout = states[STATE_NAMES.awaitApproval]?.TimeoutSeconds;
    const configuredTimeout = definitionStatesOf(extractStateMachineDefinition(configured.template.toJSON()))[
      STATE_NAMES.awaitApproval
    ]?.TimeoutSeconds;

    // Assess
    expect(defaultTimeout).toBe(604800);
    expect(configuredTimeout).toBe(129600);
  });

  it('gives every Task an explicit timeout longer than its Lambda timeout', () => {
    // Prepare
    const functionTimeouts = new Map(
      Object.entries(synthesized.template.findResources('AWS::Lambda::Function')).map(
        ([logicalId, resource]) => [
          `arn:aws:lambda:us-east-1:123456789012:function:${logicalId}`,
          (resource as { Properties: { Timeout: number } }).Properties.Timeout,
        ],
      ),
    );

    // Act
    const tasks = Object.entries(states).filter(([, state]) => state.Type === 'Task');

    // Assess
    expect(tasks).toHaveLength(11);
    for (const [name, task] of tasks) {
      expect(task.TimeoutSeconds, name).toEqual(expect.any(Number));
      const functionArn =
        task.Resource === 'arn:aws:states:::lambda:invoke.waitForTaskToken' ? undefined : task.Resource;
      const lambdaTimeout = functionTimeouts.get(String(functionArn));
      if (lambdaTimeout !== undefined)
        expect(task.TimeoutSeconds as number, name).toBeGreaterThan(lambdaTimeout);
    }
  });

  it('wires the states the local runner and the handlers rely on', () => {
    // Act
    const awaitApproval = states[STATE_NAMES.awaitApproval];
    const continueAsNew = states[STATE_NAMES.continueAsNew];

    // Assess
    expect(definition.StartAt).toBe('Prepare');
    expect(states.Prepare).toMatchObject({
      Parameters: { 'runId.$': '$.runId', 'executionId.$': '$$.Execution.Id' },
      Next: 'Resume?',
    });
    expect(states['Resume?']).toMatchObject({
      Choices: [
        { Variable: '$.next', StringEquals: 'await', Next: 'AwaitApproval' },
        { Variable: '$.next', StringEquals: 'execute', Next: 'ExecuteTools' },
        { Variable: '$.next', StringEquals: 'reject', Next: 'RecordRejection' },
        { Variable: '$.next', StringEquals: 'answer', Next: 'RecordExternalDecision' },
      ],
      Default: 'ModelTurn',
    });
    expect(states.Route).toMatchObject({
      Choices: [
        { Variable: '$.route', StringEquals: 'tools', Next: 'ExecuteTools' },
        { Variable: '$.route', StringEquals: 'approval', Next: 'AwaitApproval' },
        { Variable: '$.route', StringEquals: 'continue', Next: 'ContinueAsNew' },
      ],
      Default: 'Finish',
    });
    expect(awaitApproval).toMatchObject({
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      Parameters: { Payload: { 'runId.$': '$.runId', 'turn.$': '$.turn', 'taskToken.$': '$$.Task.Token' } },
      ResultPath: '$.decision',
      Next: 'AfterApproval',
      Catch: [
        { ErrorEquals: ['countersign.Rejected'], ResultPath: '$.rejection', Next: 'AfterRejection' },
        // A retried pause whose turn is approved on record carries it on (issue #29).
        { ErrorEquals: ['countersign.Approved'], ResultPath: '$.decision', Next: 'AfterApproval' },
        { ErrorEquals: ['States.Timeout'], ResultPath: '$.timeout', Next: 'MarkExpired' },
        { ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'AwaitApproval failed' },
      ],
    });
    expect(continueAsNew).toMatchObject({
      Resource: 'arn:aws:states:::states:startExecution',
      Parameters: {
        'StateMachineArn.$': '$$.StateMachine.Id',
        Input: { 'runId.$': '$.runId', 'AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$': '$$.Execution.Id' },
        'Name.$': "States.Format('{}-{}', $.runId, $.turn)",
      },
      Next: 'Done',
    });
    expect(states.MarkFailed).toMatchObject({
      Parameters: { 'runId.$': '$.runId', 'failure.$': '$.failure', 'failedStep.$': '$.failedStep' },
      Next: 'RunFailed',
    });
    // Only an external run's wait (Prepare names its kind) ends in RecordExternalDecision.
    const external = [
      {
        And: [
          { Variable: '$.kind', IsPresent: true },
          { Variable: '$.kind', StringEquals: 'external' },
        ],
      },
    ];
    expect(states.AfterApproval).toMatchObject({
      Choices: [{ ...external[0], Next: 'RecordExternalDecision' }],
      Default: 'ExecuteTools',
    });
    expect(states.AfterRejection).toMatchObject({
      Choices: [{ ...external[0], Next: 'RecordExternalDecision' }],
      Default: 'RecordRejection',
    });
    expect(states.MarkExpired).toMatchObject({ ResultPath: null, Next: 'AfterExpiry' });
    expect(states.AfterExpiry).toMatchObject({
      Choices: [{ ...external[0], Next: 'RecordExternalDecision' }],
      Default: 'Expired',
    });
    // An edit of an external run goes back to a fresh card through ExecuteTools; an answer to the caller.
    expect(states.RecordExternalDecision).toMatchObject({ Next: 'AfterExternalDecision' });
    expect(states.AfterExternalDecision).toMatchObject({
      Choices: [
        {
          And: [
            { Variable: '$.route', IsPresent: true },
            { Variable: '$.route', StringEquals: 'edited' },
          ],
          Next: 'ExecuteTools',
        },
      ],
      Default: 'NotifyCaller',
    });
    expect(states.NotifyCaller).toMatchObject({
      Next: 'Done',
      Retry: expect.arrayContaining([
        expect.objectContaining({
          ErrorEquals: ['countersign.webhook-failed'],
          MaxAttempts: 6,
          BackoffRate: 3,
        }),
      ]),
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.webhook', Next: 'Done' }],
    });
    expect(states.RunFailed?.Type).toBe('Fail');
    expect(states.Done?.Type).toBe('Succeed');
    expect(states.Expired?.Type).toBe('Succeed');
  });

  it('names its states and routing errors from the contract the step handlers are keyed by', () => {
    // Prepare
    // (only their names are read: the receipt recording wraps a run store it never calls here)
    const stepHandlers = createStepHandlers({ receipts: {}, runs: {} } as RunDependencies);

    // Act
    const lambdaTasks = Object.entries(states)
      .filter(([name, state]) => state.Type === 'Task' && name !== STATE_NAMES.continueAsNew)
      .map(([name]) => name);

    // Assess: the contract's states, and the Pass state each catch names its failed state in
    // (NotifyCaller's catch ends the run decided, not failed: asserted above)
    const caughtStates = Object.values(STATE_NAMES).filter(
      (name) => name !== STATE_NAMES.notifyCaller && (states[name]?.Catch as unknown[] | undefined)?.length,
    );
    expect(Object.keys(states).sort()).toEqual(
      [...Object.values(STATE_NAMES), ...caughtStates.map((name) => failedStateName(name))].sort(),
    );
    expect(Object.keys(stepHandlers).sort()).toEqual(lambdaTasks.sort());
    expect(states[STATE_NAMES.runFailed]).toMatchObject({ Error: ERROR_NAMES.runFailed });
    const awaitCatchers = states[STATE_NAMES.awaitApproval]?.Catch as Array<{ ErrorEquals: string[] }>;
    expect(awaitCatchers.map((catcher) => catcher.ErrorEquals[0])).toEqual([
      ERROR_NAMES.rejected,
      ERROR_NAMES.approved,
      ERROR_NAMES.timeout,
      'States.ALL',
    ]);
    const retriers = (states[STATE_NAMES.modelTurn]?.Retry ?? []) as Array<{ ErrorEquals: string[] }>;
    const retried = retriers.flatMap((retrier) => retrier.ErrorEquals);
    expect(retried).toContain(ERROR_NAMES.internal);
    expect(retried).toContain(ERROR_NAMES.unavailable);
  });

  it('retries a transient fault (countersign.unavailable) on every Lambda Task, bounded, with backoff and full jitter', () => {
    // Act
    const lambdaTasks = Object.entries(states).filter(
      ([name, state]) => state.Type === 'Task' && name !== STATE_NAMES.continueAsNew,
    );

    // Assess: more attempts than ExecuteTools gives one tool call, so the call's own bound decides.
    for (const [name, task] of lambdaTasks) {
      const retrier = (
        task.Retry as Array<{
          ErrorEquals: string[];
          MaxAttempts: number;
          BackoffRate: number;
          MaxDelaySeconds?: number;
          JitterStrategy?: string;
        }>
      ).find((candidate) => candidate.ErrorEquals.includes(ERROR_NAMES.unavailable));
      expect(retrier?.ErrorEquals, name).toEqual([ERROR_NAMES.unavailable]);
      expect(retrier?.MaxAttempts, name).toBeGreaterThanOrEqual(MAXIMUM_TOOL_ATTEMPTS);
      expect(retrier?.MaxAttempts, name).toBeLessThanOrEqual(10);
      expect(retrier?.BackoffRate, name).toBeGreaterThan(1);
      expect(retrier?.MaxDelaySeconds, name).toBeDefined();
      expect(retrier?.JitterStrategy, name).toBe('FULL');
    }
  });

  it('routes every Task failure but a webhook to MarkFailed, with the failure in $.failure and the failed state in $.failedStep', () => {
    // Act: a webhook that could not be delivered leaves the run's answer as it is (asserted above)
    const tasks = Object.entries(states).filter(
      ([name, state]) =>
        state.Type === 'Task' && name !== STATE_NAMES.markFailed && name !== STATE_NAMES.notifyCaller,
    );

    // Assess
    expect(tasks.map(([name]) => name)).toContain(STATE_NAMES.continueAsNew);
    for (const [name, task] of tasks) {
      const catchers = task.Catch as Array<{ ErrorEquals: string[]; ResultPath: string; Next: string }>;
      expect(catchers.at(-1), name).toEqual({
        ErrorEquals: ['States.ALL'],
        ResultPath: '$.failure',
        Next: failedStateName(name as StateName),
      });
      expect(states[failedStateName(name as StateName)], name).toEqual({
        Type: 'Pass',
        Result: name,
        ResultPath: '$.failedStep',
        Next: STATE_NAMES.markFailed,
      });
    }
  });

  it("retries the Lambda service's transient errors on every Lambda Task, throttling included", () => {
    // Act: every Task but the hand-over to a new execution invokes a Lambda
    const lambdaTasks = Object.entries(states).filter(
      ([name, state]) => state.Type === 'Task' && name !== STATE_NAMES.continueAsNew,
    );

    // Assess
    expect(lambdaTasks).toHaveLength(10);
    for (const [name, task] of lambdaTasks) {
      const retriers = task.Retry as Array<{
        ErrorEquals: string[];
        MaxAttempts: number;
        MaxDelaySeconds?: number;
        JitterStrategy?: string;
      }>;
      const service = retriers.find((retrier) => retrier.ErrorEquals.includes('Lambda.ServiceException'));
      const throttled = retriers.find((retrier) =>
        retrier.ErrorEquals.includes('Lambda.TooManyRequestsException'),
      );
      expect(service?.ErrorEquals, name).toEqual(
        expect.arrayContaining([
          'Lambda.ServiceException',
          'Lambda.AWSLambdaException',
          'Lambda.SdkClientException',
        ]),
      );
      expect(service?.MaxAttempts, name).toBeGreaterThanOrEqual(3);
      expect(service?.JitterStrategy, name).toBe('FULL');
      // A throttled step waits minutes, not seconds: reserved concurrency is small by default.
      expect(throttled?.ErrorEquals, name).toEqual(['Lambda.TooManyRequestsException']);
      expect(throttled?.MaxAttempts, name).toBeGreaterThanOrEqual(10);
      expect(throttled?.MaxDelaySeconds, name).toBe(60);
      expect(throttled?.JitterStrategy, name).toBe('FULL');
    }
  });

  it('is accepted and run by aws-local-stepfunctions with path checks on', async () => {
    // Prepare
    const visited: string[] = [];
    const handlers: Record<string, Handler> = {
      Prepare: async (input) => {
        visited.push('Prepare');
        return { runId: input.runId, turn: 0, next: 'model' };
      },
      ModelTurn: async (input) => {
        visited.push('ModelTurn');
        const turn = Number(input.turn) + 1;
        return { runId: input.runId, turn, route: turn === 1 ? 'approval' : 'final' };
      },
      AwaitApproval: async (input) => {
        // The run, the turn, the execution and the token: the pause reads the rest from the table.
        const payload = (input.Payload ?? input) as Record<string, unknown>;
        visited.push(`AwaitApproval:${Object.keys(payload).sort().join(',')}`);
        return { approved: true };
      },
      ExecuteTools: async (input) => {
        visited.push('ExecuteTools');
        return { runId: input.runId, turn: input.turn };
      },
      Finish: async (input) => {
        visited.push(`Finish:${String(input.runId)}`);
        return {};
      },
    };

    // Act
    const stateMachine = new StateMachine(definition as never, {
      validationOptions: { checkPaths: true, checkArn: false },
    });
    const execution = stateMachine.run(
      { runId: 'run-1' },
      {
        overrides: { taskResourceLocalHandlers: handlers as never },
        context: { Execution: { Id: 'execution-1' }, Task: { Token: 'token-1' } } as never,
      },
    );
    await execution.result;

    // Assess
    expect(visited).toEqual([
      'Prepare',
      'ModelTurn',
      'AwaitApproval:executionId,runId,taskToken,turn',
      'ExecuteTools',
      'ModelTurn',
      'Finish:run-1',
    ]);
  });
});
