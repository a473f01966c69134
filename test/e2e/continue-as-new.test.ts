import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  removeTestData,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';

describe('a run that outgrows one execution', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    // One model turn per execution: every further turn continues as a new execution.
    const put = await runtime.client('admin').putConfiguration({
      path: { id: 'one-turn-per-execution' },
      body: {
        configurationId: 'one-turn-per-execution',
        label: 'One turn per execution',
        provider: 'scripted',
        model: 'scripted-v1',
        allowedTools: ['get_page', 'update_page_metadata'],
        options: { turnsPerExecution: 1 },
      },
    });
    expect(put.status).toBe(200);
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  it('continues as a new execution of the same synthesized state machine and completes', async () => {
    // Act: a read question takes two model turns (call, then answer).
    const { runId, view } = await startRunAndSettle(runtime, 'What is on page 12?', {
      configurationId: 'one-turn-per-execution',
    });

    // Assess
    expect(view.status).toBe('completed');
    expect(view.transcript.toolCalls).toBe(1);
    const record = await runtime.dependencies.runs.getRunRecord(runId);
    expect(record?.executionCount).toBe(2);
    expect(record?.executionStartTurn).toBe(1);
  });
});
