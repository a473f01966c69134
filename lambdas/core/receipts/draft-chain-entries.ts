import type { CallChoice } from '../approvals/call-choices.js';
import {
  type ApprovalRecord,
  type DecisionRecord,
  readCardShown,
  readEditsOnRecord,
} from '../approvals/decision-record.js';
import type { StoredCard } from '../approvals/stored-card.js';
import { refusal } from '../persisted-shape.js';
import type { TurnPolicy } from '../policy/policy-floor.js';
import type { EntryDraft } from './append-chain-entry.js';
import type { CallChoiceEntry, CallEditEntry, PolicyInForce, ReceiptPerson } from './chain-entry.js';
import { hashJson, hashOf, hashPolicy } from './entry-hashes.js';

// The chain's account of the records countersign already writes: each entry is described from a
// record (and the card it was decided on), never from the request, so the chain says what the
// audit says.

type CardOfEntry = Pick<
  StoredCard,
  'runId' | 'turn' | 'digest' | 'pausedAt' | 'sealedCard' | 'approverGroups'
>;

/** Fields an approval and a decision share: the card as it was shown, and the policy in force. */
function draftCardFields(card: CardOfEntry, policy: TurnPolicy, channel: string | undefined) {
  const inForce: PolicyInForce = {
    fourEyes: policy.fourEyes,
    requiredApprovals: policy.requiredApprovals,
    decisionGate: policy.decisionGate,
    approverGroups: [...(card.approverGroups ?? [])].sort(),
  };
  return {
    digest: card.digest,
    cardShownAt: card.pausedAt,
    sealedCardHash: hashOf(card.sealedCard),
    policy: inForce,
    policyHash: hashPolicy(inForce),
    ...(channel === undefined ? {} : { channel }),
  };
}

/**
 * A person as a receipt names them. countersign's user id is the subject (`sub`) of the token
 * they signed in with: user records are keyed by it.
 */
export function toReceiptPerson(userId: string): ReceiptPerson {
  return { userId, subject: userId };
}

/** The channel a record names, when it names one (records before channels do not). */
function channelOf(record: object): string | undefined {
  const channel = (record as { channel?: unknown }).channel;
  return typeof channel === 'string' ? channel : undefined;
}

/**
 * A k-of-n approval's entry, from its approval record and the card it approved.
 *
 * @example
 * const draft = draftApprovalEntry(approval, card, effectiveTurnPolicy(card, floor));
 */
export function draftApprovalEntry(
  approval: ApprovalRecord,
  card: CardOfEntry,
  policy: TurnPolicy,
): EntryDraft {
  return {
    kind: 'approval',
    runId: approval.runId,
    turn: approval.turn,
    approver: toReceiptPerson(approval.approvedBy),
    approvedAt: approval.approvedAt,
    ...(approval.choices ? { choices: toChoiceEntries(approval.choices) } : {}),
    ...draftCardFields(card, policy, channelOf(approval)),
    // The approval names its digest; the card's is the same, or the approval did not count.
    digest: approval.digest,
  };
}

/**
 * An approve or reject decision's entry, from its decision record (the claim) and its card. A
 * decision without k-of-n approvers was approved (or rejected) by its decider alone.
 *
 * @example
 * const draft = draftDecisionEntry(record, card, effectiveTurnPolicy(card, floor));
 */
export function draftDecisionEntry(
  record: DecisionRecord & { decision: 'approve' | 'reject' },
  card: CardOfEntry,
  policy: TurnPolicy,
): EntryDraft {
  return {
    kind: 'decision',
    runId: record.runId,
    turn: record.turn,
    decision: record.decision,
    decidedBy: toReceiptPerson(record.decidedBy),
    approvers: (record.approvedBy ?? [record.decidedBy]).map(toReceiptPerson),
    decidedAt: record.decidedAt,
    callsHash: hashOf(record.cardShown),
    ...(record.reason ? { reasonHash: hashOf(record.reason) } : {}),
    // A whole-turn decision gives every call its decision, a rejected call the body's reason.
    choices: toChoiceEntries(
      record.choices ??
        readCardShown(record.cardShown).calls.map((call) => ({
          index: call.index,
          tool: call.tool,
          decision: record.decision,
          ...(record.decision === 'reject' && record.reason ? { reason: record.reason } : {}),
        })),
    ),
    ...draftCardFields(card, policy, channelOf(record)),
    digest: record.digest,
  };
}

/**
 * An edit's entry, from its decision record (`edits`) and the card it edited: each edited call
 * with the hashes of its new arguments and of the arguments the card showed. Whatever kind of run
 * the card is of: the record's account of the card is the original.
 *
 * @example
 * const draft = draftEditEntry(record, card, effectiveTurnPolicy(card, floor));
 */
export function draftEditEntry(
  record: DecisionRecord & { decision: 'edit' },
  card: CardOfEntry,
  policy: TurnPolicy,
): EntryDraft {
  const shown = new Map(readCardShown(record.cardShown).calls.map((call) => [call.index, call.arguments]));
  const edits = readEditsOnRecord(record).map((edit): CallEditEntry => {
    // An edit names a call of the card it edited; a record that says otherwise is not one we wrote.
    if (!shown.has(edit.index)) throw refusal('decision record');
    return {
      index: edit.index,
      argumentsHash: hashJson(edit.arguments),
      originalArgumentsHash: hashJson(shown.get(edit.index)),
    };
  });
  return {
    kind: 'edit',
    runId: record.runId,
    turn: record.turn,
    editedBy: toReceiptPerson(record.decidedBy),
    editedAt: record.decidedAt,
    callsHash: hashOf(record.cardShown),
    edits: edits.sort((left, right) => left.index - right.index),
    ...draftCardFields(card, policy, channelOf(record)),
    digest: record.digest,
  };
}

/** Each call's choice as a receipt binds it: its reason by hash, in the order of the calls. */
function toChoiceEntries(choices: readonly CallChoice[]): CallChoiceEntry[] {
  return [...choices]
    .sort((left, right) => left.index - right.index)
    .map((choice) => ({
      index: choice.index,
      decision: choice.decision,
      ...(choice.decision === 'reject' && choice.reason ? { reasonHash: hashOf(choice.reason) } : {}),
    }));
}

/** The cancel of a run, from what the cancel wrote on its record. */
export function draftCancelEntry(cancel: {
  runId: string;
  turn: number;
  cancelledBy: string;
  cancelledAt: string;
  reason?: string | undefined;
}): EntryDraft {
  return {
    kind: 'cancel',
    runId: cancel.runId,
    turn: cancel.turn,
    cancelledBy: toReceiptPerson(cancel.cancelledBy),
    cancelledAt: cancel.cancelledAt,
    ...(cancel.reason ? { reasonHash: hashOf(cancel.reason) } : {}),
  };
}

/** The expiry of a run's approval wait. */
export function draftExpiryEntry(expiry: { runId: string; turn: number; expiredAt: string }): EntryDraft {
  return { kind: 'expiry', runId: expiry.runId, turn: expiry.turn, expiredAt: expiry.expiredAt };
}
