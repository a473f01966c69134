import { effectiveTurnPolicy } from '../approvals/decision-gate.js';
import type { ApprovalRecord, DecisionClaim, DecisionRecord } from '../approvals/decision-record.js';
import type { StoredCard } from '../approvals/stored-card.js';
import { nameErrorClass } from '../errors.js';
import type { PolicyFloor } from '../policy/policy-floor.js';
import type { Logger, RunRepository } from '../ports.js';
import type { RunRecord } from '../run-record.js';
import {
  type AppendChainOutcome,
  appendChainEntry,
  type ChainDependencies,
  type EntryDraft,
} from './append-chain-entry.js';
import {
  draftApprovalEntry,
  draftCancelEntry,
  draftDecisionEntry,
  draftEditEntry,
  draftExpiryEntry,
} from './draft-chain-entries.js';

export interface ReceiptRecordingDependencies extends ChainDependencies {
  /** The deployment's policy floor: an entry names the policy a turn was decided under. */
  policyFloor: PolicyFloor | undefined;
  logger: Logger;
  /** Told of every entry appended (approver analytics); a failure here never fails the record. */
  onAppended?: (entry: AppendChainOutcome['entry']) => Promise<void>;
}

/** Cards and endings remembered per container; more than a few runs at once is not a request's. */
const REMEMBERED_RUNS = 256;

/**
 * THE module that keeps receipt chains (docs/receipts.md, "How entries are recorded"): a run
 * repository that appends a chain entry whenever the records countersign already writes say
 * something happened, so the decision, cancel and expiry use cases never know about the chain:
 * - an approval (k-of-n) appends that approval as its record is written, after the gates passed;
 * - a decision claimed (approve, reject or edit) appends it before the claim is answered,
 *   so a decision whose entry cannot be appended is never delivered; a claim found already made,
 *   or read back (after a fault on its write, or to answer a repeat), appends it if an earlier
 *   request could not: one entry per claim (per turn), however often a request is retried;
 * - a run moved to `cancelled` or `expired` (or a card closed for either) appends its ending.
 * The card an approval or a decision names is the one the request read (the use case reads the
 * card first), so the entry binds the card that was judged, with no read of its own.
 *
 * @example
 * const runs = recordReceiptEntries(repository, { chain, signer, clock, policyFloor, logger });
 */
export function recordReceiptEntries(
  runs: RunRepository,
  dependencies: ReceiptRecordingDependencies,
): RunRepository {
  const cards = new RememberedRuns<StoredCard>();
  const endings = new RememberedRuns<true>();

  const append = async (draft: EntryDraft): Promise<void> => {
    const outcome = await appendChainEntry(dependencies, draft);
    if (outcome.kind !== 'appended' || !dependencies.onAppended) return;
    await dependencies.onAppended(outcome.entry).catch((error: unknown) => {
      dependencies.logger.warn('receipt entry observer failed', {
        runId: draft.runId,
        errorClass: nameErrorClass(error),
      });
    });
  };

  /** The card a record names (same turn and digest): the one the request read, else read now. */
  const cardOf = async (runId: string, turn: number, digest: string): Promise<StoredCard | undefined> => {
    const matches = (card: StoredCard | undefined) => card?.turn === turn && card.digest === digest;
    const remembered = cards.get(runId);
    if (matches(remembered)) return remembered;
    const current = await runs.getCard(runId);
    if (matches(current)) return current;
    // The card moved on since (a later turn paused): the entry could not say what was shown.
    dependencies.logger.warn('receipt entry not recorded: its card moved on', { runId, turn });
    return undefined;
  };

  // A function that may not sign (cancels, expiries) records neither approvals nor decisions.
  const recordApproval = async (approval: ApprovalRecord): Promise<void> => {
    if (!dependencies.signer) return;
    const card = await cardOf(approval.runId, approval.turn, approval.digest);
    if (card)
      await append(draftApprovalEntry(approval, card, effectiveTurnPolicy(card, dependencies.policyFloor)));
  };

  const recordDecision = async (record: DecisionRecord): Promise<void> => {
    if (record.decision === 'cancel' || !dependencies.signer) return; // a cancel's entry: its run record
    const card = await cardOf(record.runId, record.turn, record.digest);
    if (!card) return;
    const policy = effectiveTurnPolicy(card, dependencies.policyFloor);
    // An edit is the turn's decision too: signed, though it released and refused nothing.
    await append(
      record.decision === 'edit'
        ? draftEditEntry({ ...record, decision: record.decision }, card, policy)
        : draftDecisionEntry({ ...record, decision: record.decision }, card, policy),
    );
  };

  // Read after the write: the turn a running run was cancelled at can move until the cancel lands.
  const recordEnding = async (runId: string): Promise<void> => {
    if (endings.get(runId)) return;
    const record = await runs.getRunRecord(runId);
    const draft = record ? draftEndingEntry(record) : undefined;
    if (!draft) return;
    await append(draft);
    endings.set(runId, true);
  };

  return new Proxy(runs, {
    get(target, property, receiver) {
      if (property === 'getCard') {
        return async (runId: string) => {
          const card = await target.getCard(runId);
          if (card) cards.set(runId, card);
          return card;
        };
      }
      if (property === 'recordApproval') {
        // Appended first, then tallied: the approval record is written whatever the tally finds
        // (the audit keeps an approval the card moved past), and the request that completes the
        // tally goes on to its claim as soon as it has counted.
        return async (approval: ApprovalRecord) => {
          await recordApproval(approval);
          return target.recordApproval(approval);
        };
      }
      if (property === 'claimDecision') {
        return async (claim: DecisionClaim) => {
          const outcome = await target.claimDecision(claim);
          await recordDecision(outcome.kind === 'claimed' ? claim : outcome.existing);
          return outcome;
        };
      }
      if (property === 'getDecision') {
        // A decision read back (its claim write met a fault) or answered again is one the
        // request may deliver: its entry first, if an earlier request could not append it.
        return async (runId: string, turn: number) => {
          const record = await target.getDecision(runId, turn);
          if (record) await recordDecision(record);
          return record;
        };
      }
      if (property === 'updateRun') {
        return async (...args: Parameters<RunRepository['updateRun']>) => {
          const [runId, changes] = args;
          const outcome = await target.updateRun(...args);
          // Whether or not this write won: a retry of a cancel or an expiry finishes its entry.
          if (isEnding(changes.status)) await recordEnding(runId);
          return outcome;
        };
      }
      if (property === 'closeCard') {
        return async (...args: Parameters<RunRepository['closeCard']>) => {
          const [runId, because] = args;
          const outcome = await target.closeCard(...args);
          if (isEnding(because)) await recordEnding(runId);
          return outcome;
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function isEnding(status: string | undefined): boolean {
  return status === 'cancelled' || status === 'expired';
}

/** The entry of a run that ended by a cancel or an expiry, from what its record says. */
function draftEndingEntry(record: RunRecord): EntryDraft | undefined {
  const endedAt = record.endedAt ?? record.updatedAt;
  if (record.status === 'cancelled') {
    return draftCancelEntry({
      runId: record.runId,
      turn: record.turn,
      cancelledBy: record.cancelledBy ?? record.owner,
      cancelledAt: endedAt,
      reason: record.cancellationReason,
    });
  }
  if (record.status === 'expired') {
    return draftExpiryEntry({ runId: record.runId, turn: record.turn, expiredAt: endedAt });
  }
  return undefined;
}

/** A small map of the most recent runs: what this container read or recorded lately. */
class RememberedRuns<Value> {
  private readonly values = new Map<string, Value>();

  public get(runId: string): Value | undefined {
    return this.values.get(runId);
  }

  public set(runId: string, value: Value): void {
    this.values.delete(runId);
    this.values.set(runId, value);
    if (this.values.size > REMEMBERED_RUNS) {
      const oldest = this.values.keys().next().value;
      if (oldest !== undefined) this.values.delete(oldest);
    }
  }
}
