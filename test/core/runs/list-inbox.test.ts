import { describe, expect, it } from 'vitest';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { APPROVER, createHarness, OWNER, person, refusalOf, startPausedRun } from './use-case-harness.js';

describe('listInbox', () => {
  it('lists waiting cards newest first, a page at a time', async () => {
    // Prepare
    const harness = createHarness();
    const runIds: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      runIds.push((await startPausedRun(harness)).runId);
      harness.clock.advance(1_000);
    }

    // Act
    const first = await listInbox(harness.dependencies, APPROVER, { limit: 2 });
    const second = await listInbox(harness.dependencies, APPROVER, { limit: 2, cursor: first.cursor ?? '' });

    // Assess
    expect(first.cards.map((card) => card.runId)).toEqual([runIds[2], runIds[1]]);
    expect(first.cursor).toEqual(expect.any(String));
    expect(second.cards.map((card) => card.runId)).toEqual([runIds[0]]);
    expect(second.cursor).toBeUndefined();
  });

  it('shows a routed card to members of its groups and admins only, and refuses viewers without agent_approve', async () => {
    // Prepare
    const harness = createHarness({ configuration: { approverGroups: ['legal'] } });
    const paused = await startPausedRun(harness);
    const runIdsFor = async (viewer: typeof APPROVER) =>
      (await listInbox(harness.dependencies, viewer, { limit: 10 })).cards.map((card) => card.runId);

    // Act
    const member = await runIdsFor(person('lena', { grants: ['agent_approve'], groups: ['legal'] }));
    const admin = await runIdsFor(person('ada', { grants: ['admin'] }));
    const outsider = await runIdsFor(APPROVER);
    const refusal = await refusalOf(
      listInbox(harness.dependencies, person('ron', { grants: ['agent_run'] }), { limit: 10 }),
    );

    // Assess
    expect(member).toEqual([paused.runId]);
    expect(admin).toEqual([paused.runId]);
    expect(outsider).toEqual([]);
    expect(refusal.code).toBe('forbidden');
  });

  it('lists a card that cannot be opened as a placeholder beside the others and ends its run', async () => {
    // Prepare: one card's sealed bytes tampered with, as someone with table access could.
    const harness = createHarness();
    const intact = await startPausedRun(harness);
    harness.clock.advance(1_000);
    const tampered = await startPausedRun(harness);
    const stored = await harness.runs.getCard(tampered.runId);
    if (stored === undefined) throw new Error('the paused run has no card');
    await harness.runs.putCard({ ...stored, sealedCard: stored.sealedCard.map((byte) => byte ^ 0xff) });

    // Act
    const { cards } = await listInbox(harness.dependencies, APPROVER, { limit: 10 });

    // Assess
    expect(cards).toEqual([
      { runId: tampered.runId, unopenable: true, message: TEXTS.cardUnopenable },
      expect.objectContaining({ runId: intact.runId, owner: OWNER.userId }),
    ]);
    expect((await harness.runs.getRunRecord(tampered.runId))?.status).toBe('failed');
    const again = await listInbox(harness.dependencies, APPROVER, { limit: 10 });
    expect(again.cards.map((card) => card.runId)).toEqual([intact.runId]);
    expect(harness.metrics.counts.get('SealedStateRejections')).toBe(1);
  });
});
