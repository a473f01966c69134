import { afterEach, describe, expect, it, vi } from 'vitest';
import { CountersignError } from '../../lambdas/core/errors.js';
import type { Logger } from '../../lambdas/core/ports.js';
import {
  LOCAL_EXECUTION_ARN_PREFIX,
  LocalStateMachineRunner,
} from '../../lambdas/local/local-state-machine-runner.js';
import { buildRunWorkflowDefinition, createStepStubs, type StepStubs } from './run-workflow-fixture.js';

interface LogEntry {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

function createRecordingLogger(): { logger: Logger; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const record =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      entries.push({ level, message, ...(fields ? { fields } : {}) });
    };
  return {
    entries,
    logger: { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') },
  };
}

const runners: LocalStateMachineRunner[] = [];

function createRunner(stubs: StepStubs, options: { approvalTimeoutSeconds?: number; logger?: Logger } = {}) {
  const runner = new LocalStateMachineRunner({
    definition: buildRunWorkflowDefinition({
      approvalTimeoutSeconds: options.approvalTimeoutSeconds ?? 3600,
    }),
    stepHandlers: stubs.handlers,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  runners.push(runner);
  return runner;
}

afterEach(async () => {
  await Promise.all(runners.splice(0).map((runner) => runner.stop()));
});

describe('LocalStateMachineRunner', () => {
  it('passes the execution id to Prepare and resumes an approved turn into ExecuteTools', async () => {
    // Prepare
    const stubs = createStepStubs({ routes: ['approval', 'final'] });
    const runner = createRunner(stubs);

    // Act
    await runner.start({ runId: 'run-1', executionName: 'run-1' });
    await runner.idle();
    const [taskToken] = stubs.taskTokens;
    const waitingCount = runner.runningCount();
    const outcome = await runner.resume(String(taskToken), { kind: 'approve' });
    await runner.idle();

    // Assess
    expect(stubs.calls.Prepare).toEqual([
      { runId: 'run-1', executionId: `${LOCAL_EXECUTION_ARN_PREFIX}run-1` },
    ]);
    expect(LOCAL_EXECUTION_ARN_PREFIX).toBe('arn:aws:states:local:000000000000:execution:countersign:');
    expect(stubs.calls.AwaitApproval).toEqual([{ runId: 'run-1', turn: 1, taskToken }]);
    expect(taskToken).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(waitingCount).toBe(1);
    expect(outcome).toEqual({ kind: 'delivered' });
    expect(stubs.calls.ExecuteTools).toHaveLength(1);
    expect(stubs.calls.ExecuteTools[0]?.state).toMatchObject({
      runId: 'run-1',
      decision: { decision: 'approve' },
    });
    expect(stubs.calls.Finish).toHaveLength(1);
    expect(stubs.calls.MarkFailed).toHaveLength(0);
    expect(runner.runningCount()).toBe(0);
  });

  it('mints a fresh token for every visit of AwaitApproval', async () => {
    // Prepare
    const stubs = createStepStubs({ routes: ['approval', 'approval', 'final'] });
    const runner = createRunner(stubs);
    await runner.start({ runId: 'run-2', executionName: 'run-2' });
    await runner.idle();

    // Act
    await runner.resume(String(stubs.taskTokens[0]), { kind: 'approve' });
    await runner.idle();
    await runner.resume(String(stubs.taskTokens[1]), { kind: 'approve' });
    await runner.idle();

    // Assess
    expect(stubs.taskTokens).toHaveLength(2);
    expect(stubs.taskTokens[0]).not.toBe(stubs.taskTokens[1]);
    expect(stubs.calls.Finish).toHaveLength(1);
  });

  it('routes a rejection to RecordRejection through the countersign.Rejected catcher', async () => {
    // Prepare
    const stubs = createStepStubs({ routes: ['approval', 'final'] });
    const runner = createRunner(stubs);
    await runner.start({ runId: 'run-3', executionName: 'run-3' });
    await runner.idle();

    // Act
    const outcome = await runner.resume(String(stubs.taskTokens[0]), {
      kind: 'reject',
      reason: 'Wrong page.',
    });
    await runner.idle();

    // Assess
    expect(outcome).toEqual({ kind: 'delivered' });
    expect(stubs.calls.RecordRejection).toEqual([
      { runId: 'run-3', turn: 1, rejection: { Error: 'countersign.Rejected', Cause: 'Wrong page.' } },
    ]);
    expect(stubs.calls.ExecuteTools).toHaveLength(0);
    expect(stubs.calls.Finish).toHaveLength(1);
  });

  it('expires an unanswered approval through States.Timeout into MarkExpired and spends its token', async () => {
    // Prepare
    const stubs = createStepStubs({ routes: ['approval'] });
    const runner = createRunner(stubs, { approvalTimeoutSeconds: 1 });
    await runner.start({ runId: 'run-4', executionName: 'run-4' });
    await runner.idle();

    // Act
    await vi.waitFor(() => expect(stubs.calls.MarkExpired).toHaveLength(1), { timeout: 5_000 });
    const outcome = await runner.resume(String(stubs.taskTokens[0]), { kind: 'approve' });
    await runner.idle();

    // Assess
    expect(outcome).toEqual({ kind: 'token-spent' });
    expect(stubs.calls.MarkExpired).toEqual([{ runId: 'run-4', turn: 1 }]);
    expect(stubs.calls.ExecuteTools).toHaveLength(0);
    expect(stubs.calls.MarkFailed).toHaveLength(0);
    expect(runner.runningCount()).toBe(0);
  });

  it('routes a step error to MarkFailed by its name and logs no message, input or token', async () => {
    // Prepare
    const { logger, entries } = createRecordingLogger();
    const error = new CountersignError('model-failed', 'provider said: secret-api-key-123');
    const stubs = createStepStubs({ routes: ['approval'], failingStep: { name: 'ExecuteTools', error } });
    const runner = createRunner(stubs, { logger });
    await runner.start({ runId: 'run-5', executionName: 'run-5' });
    await runner.idle();
    const taskToken = String(stubs.taskTokens[0]);

    // Act
    await runner.resume(taskToken, { kind: 'approve' });
    await runner.idle();

    // Assess
    expect(stubs.calls.MarkFailed).toHaveLength(1);
    expect(stubs.calls.MarkFailed[0]).toMatchObject({
      runId: 'run-5',
      failure: { Error: 'CountersignError' },
    });
    const logText = JSON.stringify(entries);
    expect(entries.map((entry) => entry.message)).toContain('execution-failed');
    expect(entries.find((entry) => entry.message === 'execution-failed')?.fields).toMatchObject({
      runId: 'run-5',
      error: 'countersign.RunFailed',
    });
    expect(logText).not.toContain('secret-api-key-123');
    expect(logText).not.toContain(taskToken);
    expect(runner.runningCount()).toBe(0);
  });

  it('survives an execution whose failure nothing catches', async () => {
    // Prepare
    const { logger, entries } = createRecordingLogger();
    const error = new TypeError('cannot read transcript text');
    const stubs = createStepStubs({ routes: ['tools'], failingStep: { name: 'MarkFailed', error } });
    stubs.handlers.ExecuteTools = async () => {
      throw new RangeError('tool blew up');
    };
    const runner = createRunner(stubs, { logger });

    // Act
    await runner.start({ runId: 'run-6', executionName: 'run-6' });
    await runner.idle();

    // Assess
    expect(stubs.calls.MarkFailed).toHaveLength(1);
    expect(entries.find((entry) => entry.message === 'execution-failed')?.fields).toEqual({
      runId: 'run-6',
      executionName: 'run-6',
      error: 'TypeError',
    });
    expect(JSON.stringify(entries)).not.toContain('transcript text');
    expect(runner.runningCount()).toBe(0);
  });

  it('continues as a new execution named <runId>-<turn>', async () => {
    // Prepare
    const stubs = createStepStubs({ routes: ['tools', 'continue', 'final'] });
    const runner = createRunner(stubs);

    // Act
    await runner.start({ runId: 'run-7', executionName: 'run-7' });
    await runner.idle();

    // Assess
    expect(stubs.calls.Prepare).toEqual([
      { runId: 'run-7', executionId: `${LOCAL_EXECUTION_ARN_PREFIX}run-7` },
      { runId: 'run-7', executionId: `${LOCAL_EXECUTION_ARN_PREFIX}run-7-2` },
    ]);
    expect(stubs.calls.ModelTurn.map((payload) => payload.turn)).toEqual([0, 1, 2]);
    expect(stubs.calls.Finish).toHaveLength(1);
    expect(stubs.calls.MarkFailed).toHaveLength(0);
    expect(runner.runningCount()).toBe(0);
  });

  it('treats a second start of a running or finished execution name as a no-op, as StepFunctionsRunExecutions does', async () => {
    // Prepare
    const stubs = createStepStubs({ routes: ['approval'] });
    const runner = createRunner(stubs);

    // Act
    await runner.start({ runId: 'run-8', executionName: 'run-8' });
    await runner.start({ runId: 'run-8', executionName: 'run-8' });
    await runner.idle();
    const countWhileWaiting = runner.runningCount();
    await runner.resume(String(stubs.taskTokens[0]), { kind: 'approve' });
    await runner.idle();
    await runner.start({ runId: 'run-8', executionName: 'run-8' });
    await runner.idle();

    // Assess: the finished name did not run again (Step Functions: ExecutionAlreadyExists)
    expect(countWhileWaiting).toBe(1);
    expect(runner.runningCount()).toBe(0);
    expect(stubs.calls.Prepare).toHaveLength(1);
  });

  it('spends a token once it was used, and answers token-spent for an unknown one', async () => {
    // Prepare
    const stubs = createStepStubs({ routes: ['approval', 'final'] });
    const runner = createRunner(stubs);
    await runner.start({ runId: 'run-9', executionName: 'run-9' });
    await runner.idle();
    const taskToken = String(stubs.taskTokens[0]);
    await runner.resume(taskToken, { kind: 'approve' });
    await runner.idle();

    // Act
    const reused = await runner.resume(taskToken, { kind: 'approve' });
    const unknown = await runner.resume('A'.repeat(64), { kind: 'reject' });

    // Assess
    expect(reused).toEqual({ kind: 'token-spent' });
    expect(unknown).toEqual({ kind: 'token-spent' });
    expect(stubs.calls.ExecuteTools).toHaveLength(1);
  });

  it('delivers only one of two concurrent resumes of the same token', async () => {
    // Prepare
    const stubs = createStepStubs({ routes: ['approval', 'final'] });
    const runner = createRunner(stubs);
    await runner.start({ runId: 'run-10', executionName: 'run-10' });
    await runner.idle();
    const taskToken = String(stubs.taskTokens[0]);

    // Act
    const outcomes = await Promise.all([
      runner.resume(taskToken, { kind: 'approve' }),
      runner.resume(taskToken, { kind: 'reject', reason: 'late' }),
    ]);
    await runner.idle();

    // Assess
    expect(outcomes.map((outcome) => outcome.kind).sort()).toEqual(['delivered', 'token-spent']);
    expect(stubs.calls.ExecuteTools.length + stubs.calls.RecordRejection.length).toBe(1);
    expect(stubs.calls.Finish).toHaveLength(1);
  });

  it('stop() aborts running executions, spends their tokens and refuses new starts', async () => {
    // Prepare
    const stubs = createStepStubs({ routes: ['approval', 'approval'] });
    const runner = createRunner(stubs);
    await runner.start({ runId: 'run-11', executionName: 'run-11' });
    await runner.start({ runId: 'run-12', executionName: 'run-12' });
    await runner.idle();
    const countBeforeStop = runner.runningCount();

    // Act
    await runner.stop();
    const outcome = await runner.resume(String(stubs.taskTokens[0]), { kind: 'approve' });

    // Assess
    expect(countBeforeStop).toBe(2);
    expect(runner.runningCount()).toBe(0);
    expect(outcome).toEqual({ kind: 'token-spent' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stubs.calls.MarkFailed).toHaveLength(0);
    expect(stubs.calls.ExecuteTools).toHaveLength(0);
    await expect(runner.start({ runId: 'run-13', executionName: 'run-13' })).rejects.toBeInstanceOf(
      CountersignError,
    );
  });

  it('accepts a decision that arrives while the AwaitApproval handler is still running', async () => {
    // Prepare
    const stubs = createStepStubs({ routes: ['approval', 'final'] });
    let releaseHandler: () => void = () => {};
    const handlerReturned = new Promise<void>((resolve) => {
      releaseHandler = resolve;
    });
    let tokenSeen: (token: string) => void = () => {};
    const tokenArrived = new Promise<string>((resolve) => {
      tokenSeen = resolve;
    });
    stubs.handlers.AwaitApproval = async (payload: { taskToken: string }) => {
      tokenSeen(payload.taskToken);
      await handlerReturned;
    };
    const runner = createRunner(stubs);
    await runner.start({ runId: 'run-14', executionName: 'run-14' });

    // Act
    const outcome = await runner.resume(await tokenArrived, { kind: 'approve' });
    releaseHandler();
    await runner.idle();

    // Assess
    expect(outcome).toEqual({ kind: 'delivered' });
    expect(stubs.calls.ExecuteTools).toHaveLength(1);
    expect(stubs.calls.Finish).toHaveLength(1);
  });

  it('wraps a lambda:invoke result as the invocation response and hands the handler its Payload', async () => {
    // Prepare
    const received: unknown[] = [];
    const runner = new LocalStateMachineRunner({
      definition: {
        StartAt: 'Prepare',
        States: {
          Prepare: {
            Type: 'Task',
            Resource: 'arn:aws:states:::lambda:invoke',
            Parameters: { FunctionName: 'prepare', Payload: { 'runId.$': '$.runId' } },
            TimeoutSeconds: 10,
            OutputPath: '$.Payload',
            Next: 'Finish',
          },
          Finish: {
            Type: 'Task',
            Resource: 'arn:aws:lambda:::function:finish',
            TimeoutSeconds: 10,
            End: true,
          },
        },
      },
      stepHandlers: {
        Prepare: async (payload) => {
          received.push(payload);
          return { runId: payload.runId, turn: 7 };
        },
        Finish: async (payload) => {
          received.push(payload);
        },
      },
    });
    runners.push(runner);

    // Act
    await runner.start({ runId: 'run-15', executionName: 'run-15' });
    await runner.idle();

    // Assess
    expect(received).toEqual([{ runId: 'run-15' }, { runId: 'run-15', turn: 7 }]);
  });

  it('refuses definitions local mode would run wrongly', () => {
    // Prepare
    const stubs = createStepStubs({});
    const definition = buildRunWorkflowDefinition({ approvalTimeoutSeconds: 30 * 24 * 3600 });
    const { Finish: _finish, ...handlersWithoutFinish } = stubs.handlers;

    // Act
    const tooLong = () => new LocalStateMachineRunner({ definition, stepHandlers: stubs.handlers });
    const missingHandler = () =>
      new LocalStateMachineRunner({
        definition: buildRunWorkflowDefinition({ approvalTimeoutSeconds: 60 }),
        stepHandlers: handlersWithoutFinish,
      });
    const jsonata = () =>
      new LocalStateMachineRunner({
        definition: {
          QueryLanguage: 'JSONata',
          ...buildRunWorkflowDefinition({ approvalTimeoutSeconds: 60 }),
        },
        stepHandlers: stubs.handlers,
      });

    // Assess
    expect(tooLong).toThrow(/TimeoutSeconds of state "AwaitApproval"/);
    expect(missingHandler).toThrow(/"Finish"/);
    expect(jsonata).toThrow(/JSONata/);
  });
});
