import type { DecisionRecord } from '../approvals/decision-record.js';
import { isCardUndecided, type StoredCard } from '../approvals/stored-card.js';
import { CountersignError } from '../errors.js';
import type { RunDependencies } from '../run-dependencies.js';
import { TEXTS } from '../texts.js';

/**
 * How many waits one delivery follows: a retried pause seals a new token into the card, so a
 * token may be spent because a newer wait took its place. Each round is a retried pause.
 */
const MAXIMUM_DELIVERY_ROUNDS = 4;

/** `delivered`: a wait took it (now or before), or none waits any more; `expired`: the wait timed out. */
export type DeliveryOutcome = { kind: 'delivered' } | { kind: 'expired' };

type DeliveryDependencies = Pick<RunDependencies, 'runs' | 'executions' | 'clock'>;

/**
 * Delivers a claimed approval or rejection to the wait its card holds, then closes the card
 * and marks the decision delivered (the probe no longer lists it). The one way a token is used,
 * always after the claim: by the decision request, by its repeat, and by the probe's redelivery.
 *
 * A spent token means the wait it belonged to is gone: an earlier delivery reached it, or the
 * pause attempt that sealed it failed and was retried. The card is then closed only if it still
 * holds that wait's token; if a retried pause sealed a newer one meanwhile, the decision goes to
 * that wait. A pause retried later finds the decision on record and carries it on itself, so
 * nothing is left waiting with a decision on record.
 *
 * @example
 * const outcome = await deliverDecision(dependencies, card, record, (card) => unsealToken(card));
 */
export async function deliverDecision(
  dependencies: DeliveryDependencies,
  card: StoredCard,
  record: DecisionRecord,
  unsealTaskToken: (card: StoredCard) => Promise<string>,
): Promise<DeliveryOutcome> {
  let current = card;
  for (let round = 0; round < MAXIMUM_DELIVERY_ROUNDS; round += 1) {
    const outcome = await dependencies.executions.resume(
      await unsealTaskToken(current),
      // An edit goes on like an approval: ExecuteTools reads the record and puts the edit on a fresh card.
      record.decision === 'reject'
        ? { kind: 'reject', ...(record.reason ? { reason: record.reason } : {}) }
        : { kind: 'approve' },
    );
    if (
      outcome.kind === 'token-spent' &&
      dependencies.clock.now().getTime() >= Date.parse(current.expiresAt)
    ) {
      return { kind: 'expired' };
    }
    const closed = await dependencies.runs.closeCard(
      record.runId,
      'decided',
      outcome.kind === 'delivered' ? {} : { expectWaitId: current.waitId ?? null },
    );
    if (closed.kind !== 'condition-failed') {
      await dependencies.runs.markDecisionDelivered(record.runId, record.turn);
      return { kind: 'delivered' };
    }
    const next = await dependencies.runs.getCard(record.runId);
    if (
      next === undefined ||
      !isCardUndecided(next) ||
      next.turn !== record.turn ||
      next.digest !== record.digest
    ) {
      // Closed or moved on meanwhile: the wait that follows reads the decision from the record.
      await dependencies.runs.markDecisionDelivered(record.runId, record.turn);
      return { kind: 'delivered' };
    }
    current = next;
  }
  // The card kept changing hands: the decision stays undelivered, and the probe tries again.
  throw new CountersignError('unavailable', TEXTS.decisionDeliveryDeferred);
}
