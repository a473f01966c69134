import { expect, it } from 'vitest';
import {
  APPROVAL_RECORD_SCHEMA_VERSION,
  type ApprovalRecord,
} from '../../lambdas/core/approvals/decision-record.js';
import { makeStoredRun } from '../support/stored-run-fixtures.js';
import { errorOf, makeCard, makeDecision, testEveryRunRepository } from './repository-contract-support.js';

testEveryRunRepository('history', (adapters) => {
  it('keeps every decision and approval of a run, with its card, for the audit', async () => {
    // Prepare
    const card = makeCard('run-audit', '2026-03-01T10:00:00.000Z', { turn: 4 });
    await adapters.runs.putCard(card);
    const approval = (approvedBy: string, approvedAt: string): ApprovalRecord => ({
      schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
      channel: 'api',
      runId: 'run-audit',
      turn: 4,
      digest: card.digest,
      approvedBy,
      approvedAt,
    });
    await adapters.runs.recordApproval(approval('alice', '2026-03-01T10:05:00.000Z'));
    await adapters.runs.recordApproval(approval('bob', '2026-03-01T10:06:00.000Z'));
    await adapters.runs.claimDecision(makeDecision('run-audit', 'alice', { turn: 2, decision: 'reject' }));
    await adapters.runs.claimDecision(
      makeDecision('run-audit', 'bob', { turn: 4, digest: card.digest, approvedBy: ['alice', 'bob'] }),
    );

    // Act
    const trail = await adapters.runs.readAuditTrail('run-audit');
    const none = await adapters.runs.readAuditTrail('run-without-anything');

    // Assess
    expect(trail.card).toMatchObject({ runId: 'run-audit', turn: 4 });
    expect(trail.approvals.map((each) => each.approvedBy).sort()).toEqual(['alice', 'bob']);
    expect(trail.decisions.map((each) => [each.turn, each.decision]).sort()).toEqual([
      [2, 'reject'],
      [4, 'approve'],
    ]);
    expect(none).toEqual({ decisions: [], approvals: [] });
  });

  it('lists what a person decided and approved and the runs they started, newest first, paged', async () => {
    // Prepare
    for (const [index, createdAt] of ['10:01', '10:03', '10:02'].entries()) {
      await adapters.runs.createRun(
        makeStoredRun(`run-mine-${index}`, {
          owner: 'history-owner',
          label: `Mine ${index}`,
          createdAt: `2026-03-02T${createdAt}:00.000Z`,
        }),
        Uint8Array.from([1]),
      );
    }
    await adapters.runs.putCard(makeCard('run-mine-0', '2026-03-02T11:00:00.000Z'));
    await adapters.runs.recordApproval({
      schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
      channel: 'api',
      runId: 'run-mine-0',
      turn: 2,
      digest: 'a'.repeat(64),
      approvedBy: 'history-decider',
      approvedAt: '2026-03-02T11:01:00.000Z',
    });
    await adapters.runs.claimDecision(
      makeDecision('run-mine-1', 'history-decider', { decidedAt: '2026-03-02T11:02:00.000Z' }),
    );
    await adapters.runs.claimDecision(
      makeDecision('run-gone', 'history-decider', {
        decision: 'reject',
        decidedAt: '2026-03-02T11:03:00.000Z',
      }),
    );

    // Act
    const firstRuns = await adapters.runs.listRunsOwnedBy('history-owner', { limit: 2 });
    const restRuns = await adapters.runs.listRunsOwnedBy('history-owner', {
      limit: 2,
      cursor: firstRuns.cursor ?? '',
    });
    const acts = await adapters.runs.listActsOf('history-decider', { limit: 10 });
    const nobody = await adapters.runs.listActsOf('history-nobody', { limit: 10 });
    const forged = await errorOf(
      adapters.runs.listRunsOwnedBy('history-owner', { limit: 2, cursor: 'bm90IG91cnM' }),
    );

    // Assess
    expect(firstRuns.items.map((run) => run.runId)).toEqual(['run-mine-1', 'run-mine-2']);
    expect(firstRuns.items[0]).toEqual({
      runId: 'run-mine-1',
      label: 'Mine 1',
      status: 'running',
      configurationId: 'default',
      createdAt: '2026-03-02T10:03:00.000Z',
      updatedAt: '2026-03-01T10:00:00.000Z',
    });
    expect(restRuns).toEqual({ items: [expect.objectContaining({ runId: 'run-mine-0' })] });
    expect(acts.items).toEqual([
      {
        kind: 'decision',
        runId: 'run-gone',
        turn: 3,
        at: '2026-03-02T11:03:00.000Z',
        digest: 'b'.repeat(64),
        decision: 'reject',
      },
      {
        kind: 'decision',
        runId: 'run-mine-1',
        turn: 3,
        at: '2026-03-02T11:02:00.000Z',
        digest: 'b'.repeat(64),
        decision: 'approve',
        run: { label: 'Mine 1', status: 'running' },
      },
      {
        kind: 'approval',
        runId: 'run-mine-0',
        turn: 2,
        at: '2026-03-02T11:01:00.000Z',
        digest: 'a'.repeat(64),
        run: { label: 'Mine 0', status: 'running' },
      },
    ]);
    expect(acts.cursor).toBeUndefined();
    expect(nobody).toEqual({ items: [] });
    expect(forged).toMatchObject({ code: 'bad-request', field: 'cursor' });
  });
});
