import { describe, expect, it } from 'vitest';
import { awaitApproval } from '../../../lambdas/core/runs/await-approval.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { markRunExpired } from '../../../lambdas/core/runs/end-run.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import {
  APPROVAL_TIMEOUT_SECONDS,
  APPROVER,
  createHarness,
  digestShownTo,
  OWNER,
  refusalOf,
  START,
  startPausedRun,
} from './use-case-harness.js';

describe('awaitApproval', () => {
  it('puts the paused turn in the inbox, marks the run waiting and tells the outside world without the token', async () => {
    // Prepare
    const harness = createHarness({ configuration: { approverGroups: ['legal'] } });

    // Act
    const paused = await startPausedRun(harness);

    // Assess
    const record = await harness.runs.getRunRecord(paused.runId);
    expect(record).toMatchObject({
      status: 'waiting',
      pausedAt: START,
      pendingToolNames: ['update_page_metadata'],
    });
    const { cards } = await listInbox(
      harness.dependencies,
      { ...APPROVER, groups: ['legal'] },
      { limit: 10 },
    );
    expect(cards).toMatchObject([{ runId: paused.runId, turn: paused.turn, owner: OWNER.userId }]);
    // The card stops taking decisions a margin before the wait's own timeout.
    const expiresAt = Date.parse(record?.expiresAt ?? '');
    expect(expiresAt).toBeGreaterThan(Date.parse(START));
    expect(expiresAt).toBeLessThan(Date.parse(START) + APPROVAL_TIMEOUT_SECONDS * 1000);
    expect(harness.notifier.events).toEqual([
      {
        runId: paused.runId,
        toolNames: ['update_page_metadata'],
        pausedAt: START,
        approverGroups: ['legal'],
        reason: 'paused',
      },
    ]);
    expect(JSON.stringify(harness.notifier.events)).not.toContain(paused.taskToken);
    expect(harness.metrics.counts.get('RunsSuspended')).toBe(1);
  });

  it('re-enters a wait for the same turn by re-sealing only the new token: same digest, new token delivered', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    harness.clock.advance(60_000);

    // Act: the wait is retried (a re-driven execution) with a new task token.
    await awaitApproval(harness.dependencies, {
      runId: paused.runId,
      turn: paused.turn,
      taskToken: 'task-token-redriven',
    });
    const digestAfter = await digestShownTo(harness, APPROVER, paused.runId);
    await decideRun(harness.dependencies, APPROVER, paused.runId, { decision: 'approve', digest });

    // Assess
    expect(digestAfter).toBe(digest);
    expect(harness.notifier.events).toHaveLength(1);
    expect(harness.executions.resumed).toEqual([
      { taskToken: 'task-token-redriven', decision: { kind: 'approve' } },
    ]);
  });

  it('refuses a wait for another turn, or for a run that has ended, as a conflict', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await startPausedRun(harness);

    // Act
    const otherTurn = await refusalOf(
      awaitApproval(harness.dependencies, { runId: paused.runId, turn: paused.turn + 1, taskToken: 'other' }),
    );
    await markRunExpired(harness.dependencies, { runId: paused.runId });
    const ended = await refusalOf(
      awaitApproval(harness.dependencies, { runId: paused.runId, turn: paused.turn, taskToken: 'late' }),
    );

    // Assess
    expect(otherTurn.code).toBe('conflict');
    expect(ended.code).toBe('conflict');
    expect((await listInbox(harness.dependencies, APPROVER, { limit: 10 })).cards).toEqual([]);
  });
});
