import { describe, expect, it } from 'vitest';
import { auditRun } from '../../../lambdas/core/runs/audit-run.js';
import { cancelRun } from '../../../lambdas/core/runs/cancel-run.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { listMyDecisions, listMyRuns } from '../../../lambdas/core/runs/list-history.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { viewRun } from '../../../lambdas/core/runs/view-run.js';
import {
  APPROVER,
  createHarness,
  digestShownTo,
  OWNER,
  person,
  refusalOf,
  SECOND_APPROVER,
  startPausedRun,
} from './use-case-harness.js';

const ADMIN = person('ada', { grants: ['admin'] });
const EDITOR_ONLY = person('ron', { grants: ['agent_run'] });

describe('who reads a run, and its audit', () => {
  it('opens the run for the approver who decided it, after the decision, without the final answer or the spend', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    await decideRun(harness.dependencies, APPROVER, paused.runId, { digest, decision: 'reject' });

    // Act
    const asDecider = await viewRun(harness.dependencies, APPROVER, paused.runId);
    const asOwner = await viewRun(harness.dependencies, OWNER, paused.runId);
    const asStranger = await refusalOf(viewRun(harness.dependencies, EDITOR_ONLY, paused.runId));

    // Assess
    expect(asDecider).toMatchObject({ runId: paused.runId, owner: OWNER.userId });
    expect(asDecider.transcript.finalAnswer).toBeUndefined();
    expect(asDecider.usage).toBeUndefined();
    expect(asOwner.runId).toBe(paused.runId);
    expect(asOwner.usage).toBeDefined();
    expect(asStranger).toMatchObject({ code: 'not-found' });
  });

  it('shows the same 404 to an approver outside the groups the card was routed to', async () => {
    // Prepare
    const harness = createHarness({ configuration: { approverGroups: ['legal'] } });
    const paused = await startPausedRun(harness);
    const member = person('lena', { grants: ['agent_approve'], groups: ['legal'] });

    // Act
    const outsider = await refusalOf(viewRun(harness.dependencies, APPROVER, paused.runId));
    const outsiderAudit = await refusalOf(auditRun(harness.dependencies, APPROVER, paused.runId));
    const unknown = await refusalOf(auditRun(harness.dependencies, member, 'run-that-never-was'));
    const view = await viewRun(harness.dependencies, member, paused.runId);

    // Assess
    expect(outsider).toMatchObject({ code: 'not-found', message: unknown.message });
    expect(outsiderAudit).toMatchObject({ code: 'not-found', message: unknown.message });
    expect(view).toMatchObject({ status: 'waiting', approverGroups: ['legal'] });
  });

  it('records each k-of-n approval with its tally, the decision that released the turn, and who may read it', async () => {
    // Prepare
    const harness = createHarness({ configuration: { options: { requiredApprovals: 2 } } });
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    await decideRun(harness.dependencies, APPROVER, paused.runId, { digest, decision: 'approve' });
    harness.clock.advance(60_000);
    await decideRun(harness.dependencies, SECOND_APPROVER, paused.runId, { digest, decision: 'approve' });

    // Act
    const audit = await auditRun(harness.dependencies, SECOND_APPROVER, paused.runId);
    const asAdmin = await auditRun(harness.dependencies, ADMIN, paused.runId);
    const refused = await refusalOf(auditRun(harness.dependencies, EDITOR_ONLY, paused.runId));

    // Assess
    expect(audit.entries).toEqual([
      expect.objectContaining({ kind: 'approval', by: 'alice', count: 1, required: 2, digest }),
      expect.objectContaining({ kind: 'approval', by: 'bob', count: 2, required: 2, digest }),
      expect.objectContaining({
        kind: 'decision',
        by: 'bob',
        decision: 'approve',
        digest,
        approvedBy: ['alice', 'bob'],
        calls: [{ index: 0, tool: 'update_page_metadata', preview: 'captured' }],
      }),
    ]);
    expect(asAdmin.entries).toHaveLength(3);
    expect(refused.code).toBe('not-found');
  });

  it('records a cancel with who and why, and shows it in the canceller’s own history', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await startPausedRun(harness);

    // Act
    await cancelRun(harness.dependencies, OWNER, paused.runId, { reason: 'changed my mind' });
    const audit = await auditRun(harness.dependencies, OWNER, paused.runId);
    const decided = await listMyDecisions(harness.dependencies, OWNER, { limit: 10 });

    // Assess
    expect(audit.status).toBe('cancelled');
    expect(audit.entries).toEqual([
      expect.objectContaining({ kind: 'cancel', by: OWNER.userId, reason: 'changed my mind' }),
    ]);
    expect(decided.items).toEqual([
      expect.objectContaining({ kind: 'decision', decision: 'cancel', runId: paused.runId }),
    ]);
  });
});

describe('the signed-in user’s history', () => {
  it('lists what an approver decided, newest first, the deciding approval of a k-of-n turn once', async () => {
    // Prepare
    const harness = createHarness({ configuration: { options: { requiredApprovals: 2 } } });
    const first = await startPausedRun(harness);
    harness.clock.advance(1_000);
    const second = await startPausedRun(harness);
    for (const paused of [first, second]) {
      const digest = await digestShownTo(harness, APPROVER, paused.runId);
      await decideRun(harness.dependencies, APPROVER, paused.runId, { digest, decision: 'approve' });
      harness.clock.advance(1_000);
    }
    const digest = await digestShownTo(harness, SECOND_APPROVER, first.runId);
    await decideRun(harness.dependencies, SECOND_APPROVER, first.runId, { digest, decision: 'approve' });

    // Act
    const alice = await listMyDecisions(harness.dependencies, APPROVER, { limit: 10 });
    const bob = await listMyDecisions(harness.dependencies, SECOND_APPROVER, { limit: 10 });
    const mine = await listMyRuns(harness.dependencies, OWNER, { limit: 1 });

    // Assess
    expect(alice.items.map((act) => [act.runId, act.kind])).toEqual([
      [second.runId, 'approval'],
      [first.runId, 'approval'],
    ]);
    expect(bob.items.map((act) => [act.runId, act.kind, act.decision])).toEqual([
      [first.runId, 'decision', 'approve'],
    ]);
    expect(mine.items.map((run) => run.runId)).toEqual([second.runId]);
    expect(mine.cursor).toEqual(expect.any(String));
  });
});

describe('the inbox filtered', () => {
  it('shows a routed group only to its members and admins, and narrows by configuration, tool and owner', async () => {
    // Prepare
    const harness = createHarness({ configuration: { approverGroups: ['legal'] } });
    const paused = await startPausedRun(harness);
    const member = person('lena', { grants: ['agent_approve'], groups: ['legal'] });
    const runIds = async (viewer: typeof APPROVER, filter: Parameters<typeof listInbox>[2]['filter']) =>
      (await listInbox(harness.dependencies, viewer, { limit: 10, ...(filter ? { filter } : {}) })).cards.map(
        (card) => card.runId,
      );

    // Act
    const byGroup = await runIds(member, { group: 'legal' });
    const byGroupAsAdmin = await runIds(ADMIN, { group: 'legal' });
    const notTheirGroup = await runIds(APPROVER, { group: 'legal' });
    const matching = await runIds(member, {
      configurationId: 'pages',
      tool: 'update_page_metadata',
      owner: 'olivia',
    });
    const otherTool = await runIds(member, { tool: 'close_ticket' });
    const otherOwner = await runIds(member, { owner: 'someone-else' });

    // Assess
    expect(byGroup).toEqual([paused.runId]);
    expect(byGroupAsAdmin).toEqual([paused.runId]);
    expect(notTheirGroup).toEqual([]);
    expect(matching).toEqual([paused.runId]);
    expect(otherTool).toEqual([]);
    expect(otherOwner).toEqual([]);
  });
});
