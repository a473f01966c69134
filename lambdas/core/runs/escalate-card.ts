import * as z from 'zod/mini';
import type { CardEscalation } from '../approvals/escalation-ladder.js';
import { isCardUndecided, type StoredCard } from '../approvals/stored-card.js';
import { isCountersignError } from '../errors.js';
import type { EscalationChange } from '../ports.js';
import type { RunDependencies } from '../run-dependencies.js';

/** What an escalation timer carries: identifiers only (no arguments, no token). */
export const escalationTimerInputSchema = z.object({
  runId: z.string().check(z.minLength(1), z.maxLength(100)),
  turn: z.number().check(z.int(), z.nonnegative()),
  digest: z.string().check(z.minLength(1), z.maxLength(200)),
  step: z.number().check(z.int(), z.nonnegative()),
});

/**
 * `escalated`: the card reaches the step's groups and the event went out. `ignored`: nothing to do
 * (the card was decided, moved to another turn or digest, or closed its window, or the step was
 * already routed and announced): a timer may fire late or twice, and nothing is ever cancelled.
 */
export type EscalationTimerOutcome =
  | { kind: 'escalated'; runId: string; turn: number; step: number; approverGroups: string[] }
  | { kind: 'ignored'; runId: string; turn: number; step: number; because: EscalationIgnored };

export type EscalationIgnored = 'card-moved' | 'window-closed' | 'no-such-step' | 'already-escalated';

export type EscalationDependencies = Pick<
  RunDependencies,
  'runs' | 'notifier' | 'clock' | 'logger' | 'metrics'
>;

/**
 * An escalation timer fired: while the card still waits at the timer's turn and digest, it is
 * also routed to the step's groups (a conditional write: a decision landing at the same moment
 * either closes the card first, and the timer does nothing, or finds the card already escalated,
 * which changes nothing about the decision), and `Run Awaiting Approval` goes out with the reason
 * `escalated`, naming the groups the step added. Idempotent: routing and announcing are each
 * recorded on the card (routed first, announced after), so a retried timer finishes what the
 * first did not, and a repeated one does nothing.
 *
 * @example
 * await escalateCardOnTimer(dependencies, { runId, turn: 2, digest, step: 0 });
 */
export async function escalateCardOnTimer(
  dependencies: EscalationDependencies,
  input: EscalationChange,
): Promise<EscalationTimerOutcome> {
  const ignored = (because: EscalationIgnored): EscalationTimerOutcome => {
    dependencies.logger.info('escalation timer ignored', {
      runId: input.runId,
      turn: input.turn,
      step: input.step,
      because,
    });
    return { kind: 'ignored', runId: input.runId, turn: input.turn, step: input.step, because };
  };
  const card = await readCard(dependencies, input.runId);
  if (!card || !isCardUndecided(card) || card.turn !== input.turn || card.digest !== input.digest)
    return ignored('card-moved');
  if (card.escalation?.steps[input.step] === undefined) return ignored('no-such-step');
  if (dependencies.clock.now().getTime() >= Date.parse(card.expiresAt)) return ignored('window-closed');

  let escalation: CardEscalation = card.escalation;
  if (escalation.reached <= input.step) {
    const routed = await dependencies.runs.escalateCard(input);
    if (routed.kind === 'card-moved') return ignored('card-moved');
    escalation = routed.card.escalation ?? escalation;
    dependencies.metrics.count('CardsEscalated');
    dependencies.logger.info('card escalated', { runId: input.runId, turn: input.turn, step: input.step });
  }
  if (escalation.notified > input.step) return ignored('already-escalated');
  // Every step routed and not yet announced goes out in this one event (a late earlier timer then finds it announced).
  const approverGroups = [
    ...new Set(
      escalation.steps.slice(escalation.notified, input.step + 1).flatMap((step) => step.approverGroups),
    ),
  ];
  await dependencies.notifier.runAwaitingApproval({
    runId: card.runId,
    toolNames: card.toolNames,
    pausedAt: card.pausedAt,
    approverGroups,
    reason: 'escalated',
  });
  await dependencies.runs.markEscalationNotified(input);
  return { kind: 'escalated', runId: card.runId, turn: card.turn, step: input.step, approverGroups };
}

/**
 * The stored card, or none. An item that does not parse is left to the card reader of the next
 * surface that reads it (which refuses it and ends its run); the timer only does nothing.
 */
async function readCard(
  dependencies: EscalationDependencies,
  runId: string,
): Promise<StoredCard | undefined> {
  try {
    return await dependencies.runs.getCard(runId);
  } catch (error) {
    if (!isCountersignError(error, 'sealed-state-rejected')) throw error;
    dependencies.logger.warn('escalation timer ignored: the card does not parse', { runId });
    return undefined;
  }
}
