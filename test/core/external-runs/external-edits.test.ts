import { describe, expect, it } from 'vitest';
import { recordExternalDecision } from '../../../lambdas/core/external-runs/record-external-decision.js';
import { submitExternalRun } from '../../../lambdas/core/external-runs/submit-external-run.js';
import { awaitApproval } from '../../../lambdas/core/runs/await-approval.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { executeTools } from '../../../lambdas/core/runs/execute-tools.js';
import { createHarness, digestShownTo, person, refusalOf } from '../runs/use-case-harness.js';

const AGENT = person('billing-agent', { grants: ['agent_run'] });
const ANA = person('ana', { grants: ['agent_approve'], toolAccess: ['pages/*'] });

/** An external run of one editable write under the harness's configuration, paused on its card. */
async function pausedExternalRun() {
  const harness = createHarness({
    users: [AGENT, ANA],
    configuration: { startAccess: { grants: [], groups: [], users: [AGENT.userId] } },
  });
  const { runId } = await submitExternalRun(
    harness.dependencies,
    AGENT,
    {
      configurationId: 'pages',
      clientKey: 'key-1',
      tools: [{ name: 'send_invoice', effect: 'write', editable: true }],
      calls: [{ tool: 'send_invoice', arguments: { amountCents: 120_000 } }],
    },
    'user-record',
  );
  await awaitApproval(harness.dependencies, { runId, turn: 0, taskToken: 'token-0' });
  return { harness, runId, digest: await digestShownTo(harness, ANA, runId) };
}

describe('the steps after an external run’s wait', () => {
  it('answers nothing for an edit: RecordExternalDecision routes it back, and ExecuteTools reopens it on a fresh card', async () => {
    // Prepare
    const { harness, runId, digest } = await pausedExternalRun();
    await decideRun(harness.dependencies, ANA, runId, {
      digest,
      decision: 'edit',
      edits: [{ index: 0, arguments: { amountCents: 90_000 } }],
    });

    // Act
    const recorded = await recordExternalDecision(harness.dependencies, { runId, turn: 0 });
    const reopened = await executeTools(harness.dependencies, { runId, turn: 0 });
    const retried = await executeTools(harness.dependencies, { runId, turn: 0 });

    // Assess: the run goes on at turn 1, still external, and is not answered
    expect(recorded).toEqual({ kind: 'edited' });
    expect(reopened).toEqual({ runId, turn: 1, route: 'review', owner: AGENT.userId, kind: 'external' });
    expect(retried).toEqual(reopened);
    expect((await harness.runs.getRunRecord(runId))?.status).toBe('running');
  });

  it('never runs an approved external call here: ExecuteTools refuses it', async () => {
    // Prepare
    const { harness, runId, digest } = await pausedExternalRun();
    await decideRun(harness.dependencies, ANA, runId, { digest, decision: 'approve' });

    // Act
    const refusal = await refusalOf(executeTools(harness.dependencies, { runId, turn: 0 }));

    // Assess
    expect(refusal.code).toBe('conflict');
    expect(await recordExternalDecision(harness.dependencies, { runId, turn: 0 })).toEqual({
      kind: 'answered',
    });
  });
});
