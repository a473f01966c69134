import { describe, expect, it } from 'vitest';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { escalateCardOnTimer } from '../../../lambdas/core/runs/escalate-card.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import {
  APPROVER,
  createHarness,
  digestShownTo,
  OWNER,
  person,
  refusalOf,
  startPausedRun,
  type UseCaseHarness,
} from './use-case-harness.js';

const FINANCE = person('fiona', { grants: ['agent_approve'], groups: ['finance'] });
const LEAD = person('lena', { grants: ['agent_approve'], groups: ['leads'] });
const DIRECTOR = person('dora', { grants: ['agent_approve'], groups: ['directors'] });

function escalatingHarness(): UseCaseHarness {
  return createHarness({
    configuration: {
      approverGroups: ['finance'],
      escalation: [
        { afterMinutes: 30, approverGroups: ['leads'] },
        { afterMinutes: 45, approverGroups: ['directors'] },
      ],
    },
    users: [OWNER, APPROVER, FINANCE, LEAD, DIRECTOR],
  });
}

async function inboxOf(harness: UseCaseHarness, viewer: typeof LEAD) {
  return (await listInbox(harness.dependencies, viewer, { limit: 100 })).cards;
}

describe('card escalation', () => {
  it('arms one timer per step at the pause, and the card says when and to whom it escalates', async () => {
    // Prepare
    const harness = escalatingHarness();

    // Act
    const paused = await startPausedRun(harness);
    const [card] = await inboxOf(harness, FINANCE);

    // Assess
    const digest = await digestShownTo(harness, FINANCE, paused.runId);
    expect(harness.escalations.armed).toEqual([
      { runId: paused.runId, turn: paused.turn, digest, step: 0, at: '2026-03-01T10:30:00.000Z' },
      { runId: paused.runId, turn: paused.turn, digest, step: 1, at: '2026-03-01T10:45:00.000Z' },
    ]);
    expect(card).toMatchObject({
      approverGroups: ['finance'],
      escalation: {
        steps: [
          { at: '2026-03-01T10:30:00.000Z', approverGroups: ['leads'], reached: false },
          { at: '2026-03-01T10:45:00.000Z', approverGroups: ['directors'], reached: false },
        ],
      },
    });
    expect(harness.notifier.events).toEqual([
      expect.objectContaining({ runId: paused.runId, approverGroups: ['finance'], reason: 'paused' }),
    ]);
    expect(await inboxOf(harness, LEAD)).toEqual([]);
  });

  it('routes an unanswered card to the next group when its timer fires, and announces it once', async () => {
    // Prepare
    const harness = escalatingHarness();
    const paused = await startPausedRun(harness);
    const [timer] = harness.escalations.armed;
    harness.clock.advance(30 * 60_000);
    const { at: _at, ...step } = timer ?? { at: '', runId: '', turn: 0, digest: '', step: 0 };

    // Act
    const first = await escalateCardOnTimer(harness.dependencies, step);
    const repeated = await escalateCardOnTimer(harness.dependencies, step);

    // Assess
    expect(first).toEqual({
      kind: 'escalated',
      runId: paused.runId,
      turn: paused.turn,
      step: 0,
      approverGroups: ['leads'],
    });
    expect(repeated).toMatchObject({ kind: 'ignored', because: 'already-escalated' });
    expect(harness.notifier.events.map((event) => [event.reason, event.approverGroups])).toEqual([
      ['paused', ['finance']],
      ['escalated', ['leads']],
    ]);
    expect(harness.metrics.counts.get('CardsEscalated')).toBe(1);
    const [leadCard] = await inboxOf(harness, LEAD);
    expect(leadCard).toMatchObject({
      runId: paused.runId,
      escalation: { steps: [{ reached: true }, { reached: false }] },
    });
    expect(await inboxOf(harness, DIRECTOR)).toEqual([]);
  });

  it('lets a group the card escalated to decide it, and nobody before', async () => {
    // Prepare
    const harness = escalatingHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, FINANCE, paused.runId);
    const before = await refusalOf(
      decideRun(harness.dependencies, LEAD, paused.runId, { decision: 'approve', digest }),
    );
    harness.clock.advance(30 * 60_000);
    await escalateCardOnTimer(harness.dependencies, {
      runId: paused.runId,
      turn: paused.turn,
      digest,
      step: 0,
    });

    // Act
    const outcome = await decideRun(harness.dependencies, LEAD, paused.runId, {
      decision: 'approve',
      digest,
    });

    // Assess
    expect(before.code).toBe('not-found');
    expect(before.message).toBe(TEXTS.runNotFound);
    expect(outcome).toMatchObject({ kind: 'decided', decision: 'approve' });
  });

  it('does nothing when the decision landed first, when the card moved on, or past its window', async () => {
    // Prepare
    const decided = escalatingHarness();
    const decidedRun = await startPausedRun(decided);
    const digest = await digestShownTo(decided, FINANCE, decidedRun.runId);
    await decideRun(decided.dependencies, FINANCE, decidedRun.runId, { decision: 'approve', digest });
    const late = escalatingHarness();
    const lateRun = await startPausedRun(late);
    const lateDigest = await digestShownTo(late, FINANCE, lateRun.runId);
    late.clock.advance(3_600_000);

    // Act
    const afterDecision = await escalateCardOnTimer(decided.dependencies, {
      runId: decidedRun.runId,
      turn: decidedRun.turn,
      digest,
      step: 0,
    });
    const otherDigest = await escalateCardOnTimer(late.dependencies, {
      runId: lateRun.runId,
      turn: lateRun.turn,
      digest: 'f'.repeat(64),
      step: 0,
    });
    const pastWindow = await escalateCardOnTimer(late.dependencies, {
      runId: lateRun.runId,
      turn: lateRun.turn,
      digest: lateDigest,
      step: 0,
    });

    // Assess
    expect(afterDecision).toMatchObject({ kind: 'ignored', because: 'card-moved' });
    expect(otherDigest).toMatchObject({ kind: 'ignored', because: 'card-moved' });
    expect(pastWindow).toMatchObject({ kind: 'ignored', because: 'window-closed' });
    for (const harness of [decided, late]) {
      expect(harness.notifier.events.filter((event) => event.reason === 'escalated')).toEqual([]);
    }
  });

  it('announces the steps a late timer skipped in one event, and the late one then does nothing', async () => {
    // Prepare
    const harness = escalatingHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, FINANCE, paused.runId);
    harness.clock.advance(45 * 60_000);

    // Act
    const second = await escalateCardOnTimer(harness.dependencies, {
      runId: paused.runId,
      turn: paused.turn,
      digest,
      step: 1,
    });
    const first = await escalateCardOnTimer(harness.dependencies, {
      runId: paused.runId,
      turn: paused.turn,
      digest,
      step: 0,
    });

    // Assess
    expect(second).toMatchObject({ kind: 'escalated', approverGroups: ['leads', 'directors'] });
    expect(first).toMatchObject({ kind: 'ignored', because: 'already-escalated' });
    expect(harness.notifier.events.filter((event) => event.reason === 'escalated')).toHaveLength(1);
    expect((await inboxOf(harness, DIRECTOR)).map((card) => card.runId)).toEqual([paused.runId]);
  });
});
