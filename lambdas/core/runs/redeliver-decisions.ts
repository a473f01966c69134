import { unsealCardToken } from '../approvals/card-reader.js';
import type { DecisionRecord } from '../approvals/decision-record.js';
import { isCardUndecided, type StoredCard } from '../approvals/stored-card.js';
import { CountersignError, isCountersignError, nameErrorClass } from '../errors.js';
import { lacksDecisionEntry } from '../receipts/append-chain-entry.js';
import type { ReceiptDependencies } from '../receipts/receipt-recording.js';
import type { CardReaderDependencies } from '../run-dependencies.js';
import { TEXTS } from '../texts.js';
import { deliverDecision } from './deliver-decision.js';

/**
 * A claim younger than this may still be in flight (its request is delivering it); older and
 * undelivered, its request failed between the claim and the delivery.
 */
export const UNDELIVERED_DECISION_AGE_MS = 60_000;

/** Claims redelivered per probe; more wait for the next one (5 minutes later). */
const MAXIMUM_REDELIVERIES = 100;

export interface RedeliveryReport {
  /** Undelivered claims older than a minute that this probe delivered. */
  redelivered: number;
  /** Those it could not deliver (a fault on the way): still undelivered, alarmed. */
  undelivered: number;
}

/**
 * The card reader's: the probe opens a card's task token as the decision would; and the receipt
 * chains, where a decision's entry must be before it is delivered.
 */
type RedeliveryDependencies = CardReaderDependencies & { receipts: Pick<ReceiptDependencies, 'chain'> };

/**
 * A claimed decision is always delivered, without the approver's help: the scheduled probe
 * reads the claims older than a minute that were never marked delivered (the inbox index's
 * `UNDELIVERED` partitions) and delivers each to the wait its card holds, as the decision
 * request would have (deliver-decision.ts). A claim whose card closed or moved on needs no
 * delivery any more (the wait that followed read it from the record) and is only marked.
 * Emits `DecisionsRedelivered` and `UndeliveredDecisions` (the `DecisionsUndelivered` alarm).
 *
 * @example
 * const report = await redeliverDecisions(dependencies); // { redelivered: 1, undelivered: 0 }
 */
export async function redeliverDecisions(dependencies: RedeliveryDependencies): Promise<RedeliveryReport> {
  const decidedBefore = new Date(dependencies.clock.now().getTime() - UNDELIVERED_DECISION_AGE_MS);
  const claims = await dependencies.runs.listUndeliveredDecisions({
    decidedBefore: decidedBefore.toISOString(),
    limit: MAXIMUM_REDELIVERIES,
  });
  const report: RedeliveryReport = { redelivered: 0, undelivered: 0 };
  for (const claim of claims) {
    try {
      if (await redeliver(dependencies, claim)) report.redelivered += 1;
    } catch (error) {
      report.undelivered += 1;
      dependencies.logger.warn('decision not redelivered', {
        runId: claim.runId,
        turn: claim.turn,
        errorClass: nameErrorClass(error),
        code: isCountersignError(error) ? error.code : undefined,
      });
    }
  }
  dependencies.metrics.count('DecisionsRedelivered', report.redelivered);
  dependencies.metrics.count('UndeliveredDecisions', report.undelivered);
  if (report.redelivered + report.undelivered > 0) {
    dependencies.logger.info('undelivered decisions redelivered', { ...report });
  }
  return report;
}

/** True when a wait took the decision now; false when nothing waited for it any more. */
async function redeliver(dependencies: RedeliveryDependencies, claim: DecisionRecord): Promise<boolean> {
  const card = await dependencies.runs.getCard(claim.runId);
  if (!card || !isCardUndecided(card) || card.turn !== claim.turn || card.digest !== claim.digest) {
    await dependencies.runs.markDecisionDelivered(claim.runId, claim.turn);
    return false;
  }
  // A claim whose request failed before its receipt entry waits for the approver's repeat,
  // which appends it: no decision is delivered without one (docs/receipts.md).
  if (await lacksDecisionEntry(dependencies.receipts.chain, claim))
    throw new CountersignError('conflict', TEXTS.decisionWithoutReceipt);
  const outcome = await deliverDecision(dependencies, card, claim, (current) =>
    unsealTaskToken(dependencies, current),
  );
  if (outcome.kind === 'expired') {
    // The wait timed out; its run expires on its own (MarkExpired). Nothing is left to deliver.
    await dependencies.runs.markDecisionDelivered(claim.runId, claim.turn);
    return false;
  }
  dependencies.logger.info('decision redelivered', { runId: claim.runId, turn: claim.turn });
  return true;
}

/**
 * The card's task token, through the card reader: a card that does not open is refused there
 * (reported, its run ended), and its decision needs no delivery any more.
 */
async function unsealTaskToken(dependencies: RedeliveryDependencies, card: StoredCard): Promise<string> {
  const unsealed = await unsealCardToken(dependencies, card);
  if (unsealed.kind === 'unsealed') return unsealed.taskToken;
  await dependencies.runs.markDecisionDelivered(card.runId, card.turn);
  throw new CountersignError('gone', TEXTS.cardUnopenable);
}
