import { describe, expect, it } from 'vitest';
import { readPendingCall } from '../../../lambdas/core/approvals/read-pending-call.js';
import { isCardUndecided } from '../../../lambdas/core/approvals/stored-card.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { openRunEvents, type RunEvent } from '../../../lambdas/core/runs/run-events.js';
import { viewRun } from '../../../lambdas/core/runs/view-run.js';
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
} from '../runs/use-case-harness.js';

/** A paused run whose sealed card was altered, as someone with table access could. */
async function pausedWithTamperedCard(harness: UseCaseHarness): Promise<{ runId: string; digest: string }> {
  const { runId } = await startPausedRun(harness);
  const digest = await digestShownTo(harness, APPROVER, runId);
  const stored = await harness.runs.getCard(runId);
  if (stored === undefined) throw new Error('the paused run has no card');
  await harness.runs.putCard({ ...stored, sealedCard: stored.sealedCard.map((byte) => byte ^ 0xff) });
  return { runId, digest };
}

async function collect(events: AsyncGenerator<RunEvent, void, undefined>): Promise<RunEvent[]> {
  const collected: RunEvent[] = [];
  for await (const event of events) collected.push(event);
  return collected;
}

/** Each surface that reads a card, as its use case answers about a refused one. */
const SURFACES: Record<string, (harness: UseCaseHarness, runId: string, digest: string) => Promise<unknown>> =
  {
    'the inbox': async (harness) => (await listInbox(harness.dependencies, APPROVER, { limit: 10 })).cards,
    'the run view': async (harness, runId) =>
      (await viewRun(harness.dependencies, OWNER, runId)).unopenableCard,
    'the event stream': async (harness, runId) =>
      (await collect(await openRunEvents(harness.dependencies, OWNER, runId))).map((event) => event.event),
    "a call's arguments": async (harness, runId) =>
      (await refusalOf(readPendingCall(harness.dependencies, APPROVER, runId, 0))).code,
    'a decision': async (harness, runId, digest) =>
      (await refusalOf(decideRun(harness.dependencies, APPROVER, runId, { decision: 'approve', digest })))
        .code,
  };

describe('the card reader', () => {
  it.each(Object.keys(SURFACES))(
    'refuses a card it cannot open once on %s: reported, its run ended, its placeholder shown',
    async (surface) => {
      // Prepare
      const harness = createHarness();
      const { runId, digest } = await pausedWithTamperedCard(harness);
      harness.metrics.counts.clear();

      // Act
      const shown = await SURFACES[surface]?.(harness, runId, digest);

      // Assess: what the surface shows, and the refusal in the one place that reports and ends.
      expect(shown).toEqual(
        {
          'the inbox': [{ runId, unopenable: true, message: TEXTS.cardUnopenable }],
          'the run view': { runId, unopenable: true, message: TEXTS.cardUnopenable },
          'the event stream': ['turn', 'card_unopenable', 'state'],
          "a call's arguments": 'gone',
          'a decision': 'gone',
        }[surface],
      );
      expect(harness.metrics.counts.get('SealedStateRejections')).toBe(1);
      expect(harness.metrics.counts.get('RunsFailed')).toBe(1);
      expect(await harness.runs.getRunRecord(runId)).toMatchObject({
        status: 'failed',
        failureReason: TEXTS.cardUnopenableFailure,
      });
      const card = await harness.runs.getCard(runId);
      expect(card && isCardUndecided(card)).toBe(false);
      expect(harness.executions.resumed).toEqual([]);
    },
  );

  it('shows one view: the inbox whole, the run view and the stream the part they name', async () => {
    // Prepare
    const harness = createHarness({ configuration: { approverGroups: ['legal'] } });
    const { runId } = await startPausedRun(harness);
    const approver = person('lena', { grants: ['agent_approve'], groups: ['legal'] });

    // Act
    const [inboxCard] = (await listInbox(harness.dependencies, approver, { limit: 10 })).cards;
    const view = await viewRun(harness.dependencies, OWNER, runId);
    const events = await collect(await openRunEvents(harness.dependencies, OWNER, runId));
    const awaiting = events.find((event) => event.event === 'awaiting_approval');

    // Assess
    expect(inboxCard).toMatchObject({ runId, owner: OWNER.userId, approverGroups: ['legal'] });
    if (inboxCard === undefined || !('digest' in inboxCard)) throw new Error('no card in the inbox');
    const { pausedAt, expiresAt, digest, pendingTools, turn } = inboxCard;
    // The run view names the card's routing too: its page says "Routed to" as the inbox does.
    expect(view).toMatchObject({ pausedAt, expiresAt, digest, pendingTools, approverGroups: ['legal'] });
    expect(awaiting?.data).toEqual({ runId, turn, digest, pausedAt, expiresAt, pendingTools });
  });

  it('counts the previews a read gate withheld once per card viewed', async () => {
    // Prepare: an approver who may not read page 12 sees the card without its preview.
    const harness = createHarness({
      users: [OWNER, person('pat', { grants: ['agent_approve'], pageAccess: [] })],
    });
    await startPausedRun(harness);
    const unread = person('pat', { grants: ['agent_approve'], pageAccess: [] });

    // Act
    const { cards } = await listInbox(harness.dependencies, unread, { limit: 10 });

    // Assess
    expect(cards).toEqual([
      expect.objectContaining({
        pendingTools: [expect.objectContaining({ preview: expect.objectContaining({ status: 'withheld' }) })],
      }),
    ]);
    expect(harness.metrics.counts.get('PreviewsWithheld')).toBe(1);
  });
});
