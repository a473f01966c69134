import { afterAll, describe, expect, it } from 'vitest';
import {
  DECISION_RECORD_SCHEMA_VERSION,
  NO_CARD_SHOWN,
} from '../../lambdas/core/approvals/decision-record.js';
import type { RunRecord } from '../../lambdas/core/run-record.js';
import { RUN_STATE_SCHEMA_VERSION, type RunState } from '../../lambdas/core/runs/run-state.js';
import { sealJson } from '../../lambdas/core/sealed-json.js';
import {
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';

describe('a run that was mid-step when the local process stopped', () => {
  let runtime: TestRuntime;

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  it('is driven again on restart and completes without asking the model twice for the same turn', async () => {
    // Prepare: the state a crash between ModelTurn and ExecuteTools leaves behind: the reply
    // (one read-only call) recorded, its call not yet run, the run still `running`.
    runtime = await startTestRuntime();
    const runId = '0f2c8a4e-1111-4222-8333-944455566677';
    const now = new Date().toISOString();
    const record: RunRecord = {
      runId,
      owner: 'editor',
      label: 'Update page metadata',
      configurationId: 'demo-scripted',
      taskId: 'page-metadata',
      status: 'running',
      turn: 1,
      executionCount: 1,
      executionStartTurn: 0,
      executionId: 'arn:aws:states:local:000000000000:execution:countersign:gone',
      createdAt: now,
      updatedAt: now,
      policy: { fourEyes: false, revealRejectionReason: false },
    };
    const state: RunState = {
      schemaVersion: RUN_STATE_SCHEMA_VERSION,
      runId,
      turn: 1,
      transcript: [
        { role: 'user', content: [{ type: 'text', text: 'What is on page 12?' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool_call', callId: 'call-0-0', name: 'get_page', arguments: { pageId: '12' } }],
        },
      ],
      pendingCalls: [
        { index: 0, callId: 'call-0-0', tool: 'get_page', arguments: { pageId: '12' }, offered: true },
      ],
    };
    await runtime.dependencies.runs.createRun(
      record,
      await sealJson(runtime.dependencies.sealer, 'run-state', runId, state),
    );
    await runtime.stop();

    // Act
    runtime = await startTestRuntime({ baseDirectory: runtime.baseDirectory });
    const view = await settle(runtime, runId);

    // Assess: one tool result, one final answer, nothing repeated.
    expect(view.status).toBe('completed');
    expect(view.transcript.toolCalls).toBe(1);
    expect(view.transcript.messages).toBe(4);
  });
});

describe('a decision recorded but not carried out when the local process stopped', () => {
  let runtime: TestRuntime;

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  it('is carried out on restart without asking the approver again', async () => {
    // Prepare: a waiting run whose approval was claimed and whose card was closed, but whose
    // execution was lost before it resumed (the process stopped in between).
    runtime = await startTestRuntime();
    const { runId, view } = await startRunAndSettle(runtime, "Set the author of page 14 to 'Nach Neustart'");
    await runtime.dependencies.runs.claimDecision({
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      channel: 'api',
      runId,
      turn: view.turn,
      decision: 'approve',
      digest: view.digest,
      decidedBy: 'approver',
      decidedAt: new Date().toISOString(),
      cardShown: NO_CARD_SHOWN,
      claimId: 'claim-before-restart',
    });
    await runtime.dependencies.runs.closeCard(runId, 'decided');
    await runtime.stop();

    // Act
    runtime = await startTestRuntime({ baseDirectory: runtime.baseDirectory });
    const finished = await settle(runtime, runId, 'editor', view.turn);

    // Assess
    expect(finished.status).toBe('completed');
    expect((await runtime.dependencies.pages.getPage('14'))?.author).toBe('Nach Neustart');
  });
});
