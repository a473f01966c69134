import * as z from 'zod/mini';
import { refusingPrototypeKeys } from '../persisted-shape.js';
import type { ApprovalCard } from './approval-card.js';
import type { CallPreview } from './pending-call.js';
import { delegatedApprovalSchema } from './stored-card.js';

/**
 * The append-only audit of a decision and, for k-of-n, of each approval. Version 2 records who a
 * delegate acted for (`actingFor`, `delegatedApprovals`); records written before versions existed
 * have no `schemaVersion` and read as version 1, which reads as version 2 without delegation.
 * Fixtures: `test/fixtures/decision-record/`.
 */
export const DECISION_RECORD_SCHEMA_VERSION = 2;

export type Decision = 'approve' | 'reject';

const turnSchema = z.number().check(z.int(), z.nonnegative());
const versionSchema = z.optional(z.union([z.literal(1), z.literal(DECISION_RECORD_SCHEMA_VERSION)]));

/**
 * What the card put before the approver, recorded with the decision: each call and whether a
 * preview was captured for it. The per-viewer read gate is not re-run here: it would cost a
 * record read per previewing call on the resume path.
 */
export const cardShownSchema = z.object({
  calls: z.array(
    z.object({
      index: turnSchema,
      tool: z.string(),
      arguments: z.unknown(),
      preview: z.enum(['captured', 'refused', 'failed', 'none']),
    }),
  ),
});
export type CardShown = z.infer<typeof cardShownSchema>;

/** The audit record of a decision; it is also the exactly-once claim. */
export const decisionRecordSchema = z.object({
  schemaVersion: versionSchema,
  runId: z.string(),
  turn: turnSchema,
  /** `cancel`: the run was cancelled while this turn waited; it takes the claim so no approval can. */
  decision: z.enum(['approve', 'reject', 'cancel']),
  digest: z.string(),
  decidedBy: z.string(),
  decidedAt: z.string(),
  reason: z.optional(z.string()),
  cardShown: cardShownSchema,
  /** The distinct approvers whose approvals released the turn (k-of-n, K > 1), sorted. */
  approvedBy: z.optional(z.array(z.string())),
  /** Who `decidedBy` acted for as their delegate (version 2); absent: in their own right. */
  actingFor: z.optional(z.string()),
  /** Of `approvedBy`, those who approved as someone's delegate, and for whom (version 2). */
  delegatedApprovals: z.optional(z.array(delegatedApprovalSchema)),
});
export type DecisionRecord = z.infer<typeof decisionRecordSchema>;

/**
 * One approver's approval of one turn (k-of-n): claimed once per (run, turn, approver) with a
 * conditional write and kept for the audit. It names the digest it approved, so every approval
 * that counts toward a delivery is bound to the same turn.
 */
export const approvalRecordSchema = z.object({
  schemaVersion: versionSchema,
  runId: z.string().check(z.minLength(1)),
  turn: turnSchema,
  digest: z.string().check(z.minLength(1)),
  approvedBy: z.string().check(z.minLength(1)),
  approvedAt: z.string(),
  /** The approver who is away and for whom `approvedBy` approved as their delegate (version 2). */
  actingFor: z.optional(z.string().check(z.minLength(1))),
});
export type ApprovalRecord = z.infer<typeof approvalRecordSchema>;

/** Reads a stored decision record of any known version; a future one or a prototype key does not parse. */
export const readableDecisionRecordSchema = refusingPrototypeKeys<DecisionRecord>(decisionRecordSchema);

/**
 * The audit's account of a card: each call as the approver saw it. A refusal line is not a
 * captured preview.
 *
 * @example
 * describeCardShown(card) // { calls: [{ index: 0, tool: 'update_page_metadata', arguments: {…}, preview: 'captured' }] }
 */
export function describeCardShown(card: ApprovalCard): CardShown {
  return {
    calls: card.pendingCalls.map((call) => ({
      index: call.index,
      tool: call.tool,
      arguments: call.arguments,
      preview: describePreviewShown(call.preview),
    })),
  };
}

function describePreviewShown(preview: CallPreview | undefined): CardShown['calls'][number]['preview'] {
  if (preview === undefined) return 'none';
  if (preview.failed) return 'failed';
  return preview.refused === true ? 'refused' : 'captured';
}
