import { describe, expect, it } from 'vitest';
import { announceClosedCards } from '../../lambdas/adapters/card-closing-announcer.js';
import { InMemoryRunRepository } from '../../lambdas/adapters/memory/in-memory-run-repository.js';
import type { CardClosedEvent, Logger } from '../../lambdas/core/ports.js';
import { CountingMetrics, MovableClock } from '../core/runs/use-case-harness.js';
import { makeStoredCard } from '../support/stored-run-fixtures.js';

function capturingLogger(lines: string[]): Logger {
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    lines.push(JSON.stringify({ level, message, ...fields }));
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

describe('announceClosedCards', () => {
  it('announces each card once, with its turn, why it closed, when, and its groups', async () => {
    // Prepare
    const announced: CardClosedEvent[] = [];
    const clock = new MovableClock('2026-03-02T09:20:00.000Z');
    const runs = announceClosedCards(new InMemoryRunRepository(), {
      notifier: { cardClosed: async (event) => void announced.push(event) },
      clock,
      logger: capturingLogger([]),
      metrics: new CountingMetrics(),
    });
    const card = makeStoredCard('run-announced', { approverGroups: ['finance'] });
    await runs.putCard(card);

    // Act
    await runs.closeCard('run-announced', 'decided');
    await runs.closeCard('run-announced', 'cancelled');
    await runs.closeCard('run-without-card', 'failed');

    // Assess
    expect(announced).toEqual([
      {
        runId: 'run-announced',
        turn: card.turn,
        because: 'decided',
        closedAt: '2026-03-02T09:20:00.000Z',
        approverGroups: ['finance'],
      },
    ]);
  });

  it('never fails the closing when the event cannot be put: it logs and counts it', async () => {
    // Prepare
    const lines: string[] = [];
    const metrics = new CountingMetrics();
    const runs = announceClosedCards(new InMemoryRunRepository(), {
      notifier: {
        cardClosed: async () => {
          throw Object.assign(new Error('EventBridge refused: secret detail'), {
            name: 'ThrottlingException',
          });
        },
      },
      clock: new MovableClock('2026-03-02T09:20:00.000Z'),
      logger: capturingLogger(lines),
      metrics,
    });
    await runs.putCard(makeStoredCard('run-unheard'));

    // Act
    const outcome = await runs.closeCard('run-unheard', 'expired');

    // Assess
    expect(outcome.kind).toBe('closed');
    expect((await runs.getCard('run-unheard'))?.state).toBe('closed');
    expect(metrics.counts.get('CardEventFailures')).toBe(1);
    expect(lines).toEqual([
      JSON.stringify({
        level: 'error',
        message: 'card closed event failed',
        runId: 'run-unheard',
        because: 'expired',
        errorClass: 'ThrottlingException',
      }),
    ]);
  });

  it('lets a stand-in replace closeCard and restores the repository’s own when the announcer is set back', async () => {
    // Prepare
    const announced: CardClosedEvent[] = [];
    const runs = announceClosedCards(new InMemoryRunRepository(), {
      notifier: { cardClosed: async (event) => void announced.push(event) },
      clock: new MovableClock('2026-03-02T09:20:00.000Z'),
      logger: capturingLogger([]),
      metrics: new CountingMetrics(),
    });
    await runs.putCard(makeStoredCard('run-stood-in'));
    const announcing = runs.closeCard;

    // Act
    runs.closeCard = async () => ({ kind: 'not-open' });
    const stoodIn = await runs.closeCard('run-stood-in', 'decided');
    runs.closeCard = announcing;
    const closed = await runs.closeCard('run-stood-in', 'decided');

    // Assess
    expect(stoodIn).toEqual({ kind: 'not-open' });
    expect(closed.kind).toBe('closed');
    expect(announced).toHaveLength(1);
  });
});
