import { isCardRoutedTo } from '../approvals/card-routing.js';
import { CountersignError } from '../errors.js';
import { hasGrant, isAdmin, type UserProfile } from '../identity.js';
import type { RunRepository } from '../ports.js';
import { TEXTS } from '../texts.js';
import { RECEIPT_FORMAT, RECEIPT_FORMAT_VERSION, type Receipt } from './chain-entry.js';
import type { ReceiptChainStore } from './receipt-ports.js';

export interface ReceiptReadingDependencies {
  runs: Pick<RunRepository, 'getRunRecord' | 'getCard'>;
  chain: ReceiptChainStore;
}

/**
 * GET /runs/{id}/receipt: the run's chain, oldest first, exactly as stored (a verifier sees any
 * change made to the table). Readable as the run's audit is: its owner, an admin, and the
 * approvers its card was routed to who could decide it; anyone else gets the 404 of a run that
 * does not exist, so run ids cannot be probed. One read of the run, its card and its chain.
 *
 * @example
 * const receipt = await readRunReceipt(dependencies, principal, runId); // verify it with `countersign verify`
 */
export async function readRunReceipt(
  dependencies: ReceiptReadingDependencies,
  viewer: UserProfile,
  runId: string,
): Promise<Receipt> {
  const [record, card, entries] = await Promise.all([
    dependencies.runs.getRunRecord(runId),
    dependencies.runs.getCard(runId),
    dependencies.chain.readEntries(runId),
  ]);
  const readable =
    record !== undefined &&
    (record.owner === viewer.userId ||
      isAdmin(viewer) ||
      (card !== undefined && hasGrant(viewer, 'agent_approve') && isCardRoutedTo(card, viewer)));
  if (!readable) throw new CountersignError('not-found', TEXTS.runNotFound);
  // As stored, not as parsed: the receipt is the evidence, the verifier the judge.
  return {
    format: RECEIPT_FORMAT,
    formatVersion: RECEIPT_FORMAT_VERSION,
    runId,
    entries: entries as Receipt['entries'],
  };
}
