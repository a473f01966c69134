import * as z from 'zod/mini';
import { refusingPrototypeKeys } from '../persisted-shape.js';
import type { ApprovalCard } from './approval-card.js';
import type { CallPreview } from './pending-call.js';

/**
 * The append-only audit of a decision and, for k-of-n, of each approval. Version 2 records the
 * channel the decision came through; version 1 (and records written before versions existed, with
 * no `schemaVersion`) came through the API and read so. Fixtures: `test/fixtures/decision-record/`.
 */
export const DECISION_RECORD_SCHEMA_VERSION = 2;
/** The k-of-n approval record's version; version 2 records the channel too. Fixtures: `test/fixtures/approval-record/`. */
export const APPROVAL_RECORD_SCHEMA_VERSION = 2;

export type Decision = 'approve' | 'reject';

/**
 * Where an approver decided: `api` (the HTTP API, and the inbox page on it) or `slack` (a button
 * of a Slack message). Both go through the same decision use case; the audit says which.
 */
export const DECISION_CHANNELS = ['api', 'slack'] as const;
export type DecisionChannel = (typeof DECISION_CHANNELS)[number];

const turnSchema = z.number().check(z.int(), z.nonnegative());
const channelSchema = z.enum(DECISION_CHANNELS);

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

const decisionFields = {
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
};

/** The audit record of a decision; it is also the exactly-once claim. */
export const decisionRecordSchema = z.object({
  schemaVersion: z.literal(DECISION_RECORD_SCHEMA_VERSION),
  ...decisionFields,
  /** Where `decidedBy` decided (a cancel is always `api`). */
  channel: channelSchema,
});
export type DecisionRecord = z.infer<typeof decisionRecordSchema>;

/** Version 1 and unversioned records: decided through the API, the only channel there was. */
const decisionVersion1Schema = z.pipe(
  z.object({ schemaVersion: z.optional(z.literal(1)), ...decisionFields }),
  z.transform(
    ({ schemaVersion: _written, ...record }): DecisionRecord => ({
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      ...record,
      channel: 'api',
    }),
  ),
);

/**
 * One approver's approval of one turn (k-of-n): claimed once per (run, turn, approver) with a
 * conditional write and kept for the audit. It names the digest it approved, so every approval
 * that counts toward a delivery is bound to the same turn.
 */
const approvalFields = {
  runId: z.string().check(z.minLength(1)),
  turn: turnSchema,
  digest: z.string().check(z.minLength(1)),
  approvedBy: z.string().check(z.minLength(1)),
  approvedAt: z.string(),
};

export const approvalRecordSchema = z.object({
  schemaVersion: z.literal(APPROVAL_RECORD_SCHEMA_VERSION),
  ...approvalFields,
  /** Where `approvedBy` approved. */
  channel: channelSchema,
});
export type ApprovalRecord = z.infer<typeof approvalRecordSchema>;

/** Reads a stored decision record of any known version; a future one or a prototype key does not parse. */
export const readableDecisionRecordSchema = refusingPrototypeKeys<DecisionRecord>(
  z.union([decisionRecordSchema, decisionVersion1Schema]),
);

/** Reads a stored approval record of any known version (version 1 and unversioned: the API's). */
export const readableApprovalRecordSchema = refusingPrototypeKeys<ApprovalRecord>(
  z.union([
    approvalRecordSchema,
    z.pipe(
      z.object({ schemaVersion: z.optional(z.literal(1)), ...approvalFields }),
      z.transform(
        ({ schemaVersion: _written, ...record }): ApprovalRecord => ({
          schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
          ...record,
          channel: 'api',
        }),
      ),
    ),
  ]),
);

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
