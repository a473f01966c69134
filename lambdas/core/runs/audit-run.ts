import type { CallChoice } from '../approvals/call-choices.js';
import {
  type ApprovalRecord,
  type CardShown,
  type DecisionRecord,
  readCardShown,
} from '../approvals/decision-record.js';
import { CountersignError } from '../errors.js';
import type { UserProfile } from '../identity.js';
import type { RunRepository } from '../ports.js';
import type { RunRecord, RunStatus } from '../run-record.js';
import { TEXTS } from '../texts.js';
import { readerOfRun } from './run-readers.js';

/** One line of a run's audit, oldest first. */
export type AuditEntry =
  | {
      /** One approver's approval of a k-of-n turn: who, when, the digest they approved, the tally it made. */
      kind: 'approval';
      turn: number;
      at: string;
      by: string;
      digest: string;
      /** How many approvals of this turn were on record with this one. */
      count: number;
      /** Approvals the turn needed, where the record says (the card of that turn, or its release). */
      required?: number;
    }
  | {
      /** The decision record of a turn: the claim that released or refused it. */
      kind: 'decision';
      turn: number;
      at: string;
      by: string;
      digest: string;
      /** `edit`: an approver's edit put the calls on a fresh card (the next turn's entries). */
      decision: 'approve' | 'reject' | 'edit';
      reason?: string;
      /** k-of-n: the approvers whose approvals released the turn. */
      approvedBy?: string[];
      /** Delegation: the approver away for whom the decider acted. */
      actingFor?: string;
      /** A per-call decision: each call's own choice (and a rejection's reason). */
      choices?: CallChoice[];
      /** Each call the card showed, and whether a preview was captured for it. */
      calls: Array<{
        index: number;
        tool: string;
        preview: CardShown['calls'][number]['preview'];
      }>;
    }
  | { kind: 'cancel'; at: string; by: string; reason?: string; turn?: number }
  | { kind: 'expiry'; at: string; reason?: string }
  | { kind: 'failure'; at: string; reason?: string };

/** GET /runs/{id}/audit. */
export interface RunAudit {
  runId: string;
  owner: string;
  label: string;
  status: RunStatus;
  createdAt: string;
  endedAt?: string;
  entries: AuditEntry[];
}

/**
 * A run's audit: every decision record, each k-of-n approval (who, when, digest, tally), a
 * cancel, an expiry or a failure, oldest first. Readable by the run's owner, an admin and the
 * approvers its card was routed to; the same 404 as an unknown run for everyone else. One read
 * of the run and one query of its decisions (the card comes with them).
 */
export async function auditRun(
  dependencies: { runs: Pick<RunRepository, 'getRunRecord' | 'readAuditTrail'> },
  viewer: UserProfile,
  runId: string,
): Promise<RunAudit> {
  const [record, trail] = await Promise.all([
    dependencies.runs.getRunRecord(runId),
    dependencies.runs.readAuditTrail(runId),
  ]);
  if (!record || readerOfRun(viewer, record, trail.card) === undefined) {
    throw new CountersignError('not-found', TEXTS.runNotFound);
  }
  const required = (turn: number): number | undefined => {
    if (trail.card?.turn === turn) return trail.card.requiredApprovals ?? 1;
    const released = trail.decisions.find((decision) => decision.turn === turn)?.approvedBy;
    return released?.length;
  };
  const entries: AuditEntry[] = [
    ...toApprovalAuditEntries(trail.approvals, required),
    ...trail.decisions.map(toDecisionAuditEntry),
    ...toEndingAuditEntries(record, trail.decisions),
  ].sort((left, right) => (left.at < right.at ? -1 : left.at > right.at ? 1 : 0));
  return {
    runId,
    owner: record.owner,
    label: record.label,
    status: record.status,
    createdAt: record.createdAt,
    ...(record.endedAt ? { endedAt: record.endedAt } : {}),
    entries,
  };
}

function toApprovalAuditEntries(
  approvals: readonly ApprovalRecord[],
  required: (turn: number) => number | undefined,
): AuditEntry[] {
  const ordered = [...approvals].sort((left, right) => (left.approvedAt < right.approvedAt ? -1 : 1));
  const counted = new Map<string, number>();
  return ordered.map((approval) => {
    // The tally a digest reached: approvals of another digest (a reopened turn) start again.
    const key = `${approval.turn}#${approval.digest}`;
    const count = (counted.get(key) ?? 0) + 1;
    counted.set(key, count);
    const needed = required(approval.turn);
    return {
      kind: 'approval',
      turn: approval.turn,
      at: approval.approvedAt,
      by: approval.approvedBy,
      digest: approval.digest,
      count,
      ...(needed === undefined ? {} : { required: needed }),
    };
  });
}

function toDecisionAuditEntry(decision: DecisionRecord): AuditEntry {
  if (decision.decision === 'cancel') {
    return {
      kind: 'cancel',
      at: decision.decidedAt,
      by: decision.decidedBy,
      turn: decision.turn,
      ...(decision.reason ? { reason: decision.reason } : {}),
    };
  }
  return {
    kind: 'decision',
    turn: decision.turn,
    at: decision.decidedAt,
    by: decision.decidedBy,
    digest: decision.digest,
    decision: decision.decision,
    ...(decision.reason ? { reason: decision.reason } : {}),
    ...(decision.approvedBy ? { approvedBy: decision.approvedBy } : {}),
    ...(decision.actingFor ? { actingFor: decision.actingFor } : {}),
    ...(decision.choices ? { choices: decision.choices } : {}),
    calls: callsShown(decision).map(({ index, tool, preview }) => ({ index, tool, preview })),
  };
}

/** The calls a decision's card showed; an account that does not read names none (the entry stays). */
function callsShown(decision: DecisionRecord): CardShown['calls'] {
  try {
    return readCardShown(decision.cardShown).calls;
  } catch {
    return [];
  }
}

/** How the run ended, when no decision record says it already (a cancel of a waiting turn does). */
function toEndingAuditEntries(record: RunRecord, decisions: readonly DecisionRecord[]): AuditEntry[] {
  const at = record.endedAt ?? record.updatedAt;
  const reason = record.failureReason ? { reason: record.failureReason } : {};
  if (record.status === 'cancelled') {
    if (decisions.some((decision) => decision.decision === 'cancel')) return [];
    return [
      {
        kind: 'cancel',
        at,
        by: record.cancelledBy ?? record.owner,
        ...(record.cancellationReason ? { reason: record.cancellationReason } : {}),
      },
    ];
  }
  if (record.status === 'expired') return [{ kind: 'expiry', at, ...reason }];
  if (record.status === 'failed') return [{ kind: 'failure', at, ...reason }];
  return [];
}
