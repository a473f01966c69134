import { describe, expect, it } from 'vitest';
import { decideRun, UNDELIVERED_CLAIM_RETRY_MS } from '../../../lambdas/core/runs/decide-run.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import {
  APPROVAL_TIMEOUT_SECONDS,
  APPROVER,
  createHarness,
  digestShownTo,
  OWNER,
  person,
  refusalOf,
  SECOND_APPROVER,
  startPausedRun,
  type UseCaseHarness,
} from './use-case-harness.js';

async function inboxRunIds(harness: UseCaseHarness): Promise<string[]> {
  const { cards } = await listInbox(harness.dependencies, APPROVER, { limit: 100 });
  return cards.map((card) => card.runId);
}

describe('decideRun', () => {
  it('approves a waiting turn: claims it, resumes the execution once with its token, and closes the card', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);

    // Act
    const outcome = await decideRun(harness.dependencies, APPROVER, paused.runId, {
      decision: 'approve',
      digest,
    });

    // Assess
    expect(outcome).toEqual({
      kind: 'decided',
      runId: paused.runId,
      turn: paused.turn,
      decision: 'approve',
      repeated: false,
    });
    expect(harness.executions.resumed).toEqual([
      { taskToken: paused.taskToken, decision: { kind: 'approve' } },
    ]);
    expect(await inboxRunIds(harness)).toEqual([]);
  });

  it('answers a repeated decision with the same outcome and does not resume twice', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const request = {
      decision: 'reject' as const,
      digest: await digestShownTo(harness, APPROVER, paused.runId),
    };
    await decideRun(harness.dependencies, APPROVER, paused.runId, request);

    // Act
    const repeated = await decideRun(harness.dependencies, APPROVER, paused.runId, request);

    // Assess
    expect(repeated).toMatchObject({ kind: 'decided', decision: 'reject', repeated: true });
    expect(harness.executions.resumed).toHaveLength(1);
  });

  it('refuses a different decision on a decided turn as a conflict', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    await decideRun(harness.dependencies, APPROVER, paused.runId, { decision: 'approve', digest });

    // Act
    const refusal = await refusalOf(
      decideRun(harness.dependencies, SECOND_APPROVER, paused.runId, { decision: 'reject', digest }),
    );

    // Assess
    expect(refusal.code).toBe('conflict');
    expect(refusal.message).toBe(TEXTS.alreadyDecided);
    expect(harness.executions.resumed).toHaveLength(1);
  });

  it('lets one of many concurrent approvers decide, and resumes once', async () => {
    // Prepare
    const approvers = Array.from({ length: 10 }, (_, index) =>
      person(`approver-${index}`, { grants: ['agent_approve'] }),
    );
    const harness = createHarness({ users: [OWNER, ...approvers] });
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);

    // Act
    const outcomes = await Promise.all(
      approvers.map((approver) =>
        decideRun(harness.dependencies, approver, paused.runId, { decision: 'approve', digest }),
      ),
    );

    // Assess
    expect(outcomes.filter((outcome) => outcome.kind === 'decided' && !outcome.repeated)).toHaveLength(1);
    expect(harness.executions.resumed).toHaveLength(1);
  });

  it('refuses a missing or stale digest, so only the turn that was reviewed can be approved', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await startPausedRun(harness);

    // Act
    const missing = await refusalOf(
      decideRun(harness.dependencies, APPROVER, paused.runId, { decision: 'approve' }),
    );
    const stale = await refusalOf(
      decideRun(harness.dependencies, APPROVER, paused.runId, {
        decision: 'approve',
        digest: 'f'.repeat(64),
      }),
    );

    // Assess
    expect([missing.code, missing.field]).toEqual(['stale-digest', 'body.digest']);
    expect([stale.code, stale.field]).toEqual(['stale-digest', 'body.digest']);
    expect(harness.metrics.counts.get('StaleDigestRefusals')).toBe(1);
    expect(harness.executions.resumed).toEqual([]);
    expect(await inboxRunIds(harness)).toEqual([paused.runId]);
  });

  it('refuses a decision after the card expired and expires the run', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    harness.clock.advance(APPROVAL_TIMEOUT_SECONDS * 1000);

    // Act
    const refusal = await refusalOf(
      decideRun(harness.dependencies, APPROVER, paused.runId, { decision: 'approve', digest }),
    );

    // Assess
    expect(refusal.code).toBe('gone');
    expect(refusal.message).toBe(TEXTS.decisionExpired);
    expect((await harness.runs.getRunRecord(paused.runId))?.status).toBe('expired');
    expect(harness.executions.resumed).toEqual([]);
    expect(await inboxRunIds(harness)).toEqual([]);
  });

  it('delivers a claimed but undelivered decision again only once the claim is 30 s old', async () => {
    // Prepare: the first request claims, then fails to resume (as a crash between the two would).
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const request = {
      decision: 'approve' as const,
      digest: await digestShownTo(harness, APPROVER, paused.runId),
    };
    harness.executions.failNext = { call: 'resume', error: new Error('SendTaskSuccess timed out') };
    await expect(decideRun(harness.dependencies, APPROVER, paused.runId, request)).rejects.toThrow();

    // Act
    harness.clock.advance(UNDELIVERED_CLAIM_RETRY_MS - 1);
    const tooSoon = await decideRun(harness.dependencies, APPROVER, paused.runId, request);
    const resumedTooSoon = harness.executions.resumed.length;
    harness.clock.advance(1);
    const redelivered = await decideRun(harness.dependencies, APPROVER, paused.runId, request);

    // Assess
    expect(tooSoon).toMatchObject({ kind: 'decided', repeated: true });
    expect(resumedTooSoon).toBe(0);
    expect(redelivered).toMatchObject({ kind: 'decided', repeated: true });
    expect(harness.executions.resumed).toEqual([
      { taskToken: paused.taskToken, decision: { kind: 'approve' } },
    ]);
    expect(await inboxRunIds(harness)).toEqual([]);
  });

  it('refuses an approval by someone without authority over the write tool, and lets them reject', async () => {
    // Prepare
    const readOnly = person('rita', { grants: ['agent_approve'], toolAccess: [] });
    const harness = createHarness({ users: [OWNER, readOnly] });
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, readOnly, paused.runId);

    // Act
    const refusal = await refusalOf(
      decideRun(harness.dependencies, readOnly, paused.runId, { decision: 'approve', digest }),
    );
    const rejected = await decideRun(harness.dependencies, readOnly, paused.runId, {
      decision: 'reject',
      digest,
    });

    // Assess
    expect(refusal.code).toBe('forbidden');
    expect(harness.metrics.counts.get('GateRefusals')).toBe(1);
    expect(rejected).toMatchObject({ kind: 'decided', decision: 'reject', repeated: false });
    expect(harness.executions.resumed).toEqual([
      { taskToken: paused.taskToken, decision: { kind: 'reject' } },
    ]);
  });

  it('keeps the owner from approving their own run under four-eyes', async () => {
    // Prepare
    const harness = createHarness({ configuration: { options: { fourEyes: true } } });
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, OWNER, paused.runId);

    // Act
    const refusal = await refusalOf(
      decideRun(harness.dependencies, OWNER, paused.runId, { decision: 'approve', digest }),
    );
    const approved = await decideRun(harness.dependencies, APPROVER, paused.runId, {
      decision: 'approve',
      digest,
    });

    // Assess
    expect(refusal.code).toBe('forbidden');
    expect(refusal.message).toBe(TEXTS.gateFourEyes);
    expect(approved).toMatchObject({ kind: 'decided', repeated: false });
  });

  it('goes on only at the K-th distinct approval of a k-of-n turn', async () => {
    // Prepare
    const harness = createHarness({ configuration: { options: { requiredApprovals: 2 } } });
    const paused = await startPausedRun(harness);
    const request = {
      decision: 'approve' as const,
      digest: await digestShownTo(harness, APPROVER, paused.runId),
    };

    // Act
    const first = await decideRun(harness.dependencies, APPROVER, paused.runId, request);
    const again = await decideRun(harness.dependencies, APPROVER, paused.runId, request);
    const resumedBeforeSecond = harness.executions.resumed.length;
    const second = await decideRun(harness.dependencies, SECOND_APPROVER, paused.runId, request);

    // Assess
    expect(first).toMatchObject({
      kind: 'approval-recorded',
      approvals: { count: 1, required: 2, approvedBy: ['alice'] },
    });
    expect(again).toMatchObject({ kind: 'approval-recorded', approvals: { count: 1 } });
    expect(resumedBeforeSecond).toBe(0);
    expect(second).toMatchObject({ kind: 'decided', decision: 'approve', repeated: false });
    expect(harness.executions.resumed).toHaveLength(1);
  });

  it('treats a card routed to other groups as missing, and refuses a viewer without agent_approve', async () => {
    // Prepare
    const legal = person('lena', { grants: ['agent_approve'], groups: ['legal'] });
    const runner = person('ron', { grants: ['agent_run'] });
    const harness = createHarness({
      configuration: { approverGroups: ['legal'] },
      users: [OWNER, APPROVER, legal, runner],
    });
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, legal, paused.runId);

    // Act
    const outsider = await refusalOf(
      decideRun(harness.dependencies, APPROVER, paused.runId, { decision: 'approve', digest }),
    );
    const ungranted = await refusalOf(
      decideRun(harness.dependencies, runner, paused.runId, { decision: 'approve', digest }),
    );
    const member = await decideRun(harness.dependencies, legal, paused.runId, {
      decision: 'approve',
      digest,
    });

    // Assess
    expect(outsider.code).toBe('not-found');
    expect(ungranted.code).toBe('forbidden');
    expect(member).toMatchObject({ kind: 'decided', repeated: false });
  });
});
