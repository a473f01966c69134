import * as z from 'zod/mini';
import { CountersignError } from '../errors.js';
import type { DecisionGate } from '../policy/policy-floor.js';

/**
 * What an approver's card needs, sealed apart from the transcript so that rendering the
 * inbox never decrypts a transcript. Schema-versioned like every persisted shape.
 */
export const APPROVAL_CARD_SCHEMA_VERSION = 1;

export const cardCallSchema = z.object({
  index: z.number().check(z.int(), z.nonnegative()),
  tool: z.string(),
  arguments: z.unknown(),
  /** Whether the tool was offered to the model in that turn; absent on cards sealed before it was recorded. */
  offered: z.optional(z.boolean()),
  /** The target's version as read at the pause (a tool's opt-in precondition); sealed, never sent. */
  precondition: z.optional(z.string()),
  /** The record changed after an earlier card of this call was shown (the card says so). */
  recordChanged: z.optional(z.boolean()),
});
export type CardCall = z.infer<typeof cardCallSchema>;

/** A write preview of one pending call (seed 000), bound to the call's index. */
export const callPreviewSchema = z.object({
  index: z.number().check(z.int(), z.nonnegative()),
  tool: z.string(),
  lines: z.array(z.string()),
  failed: z.boolean(),
  /** The call's arguments would be refused by its tool: the lines say so, and read no record. */
  refused: z.optional(z.boolean()),
});
export type CallPreview = z.infer<typeof callPreviewSchema>;

export interface ApprovalCard {
  schemaVersion: 1;
  runId: string;
  turn: number;
  digest: string;
  pendingCalls: CardCall[];
  /** Optional: a card sealed before previews existed has none, and still resumes. */
  callPreviews?: CallPreview[];
}

/**
 * The plaintext index entry of a waiting run (what the inbox lists and the decision gate
 * reads without decrypting anything but the token).
 */
export interface StoredCard {
  runId: string;
  owner: string;
  label: string;
  configurationId: string;
  turn: number;
  digest: string;
  pausedAt: string;
  expiresAt: string;
  toolNames: string[];
  /** Names of the tools in the turn that write (the gate checks the approver may run each). */
  writeToolNames: string[];
  fourEyes: boolean;
  /** Distinct approvers the turn needs (k-of-n). Absent on cards paused before k-of-n: 1. */
  requiredApprovals?: number;
  /** Absent on cards paused before the record gate: `tool`. */
  decisionGate?: DecisionGate;
  /** Who has approved this turn so far (k-of-n), sorted. Absent: nobody yet. */
  approvedBy?: string[];
  revealRejectionReason: boolean;
  /** The approver groups the card is routed to; absent: every approver (cards before routing). */
  approverGroups?: string[];
  state: 'waiting' | 'decided';
  sealedCard: Uint8Array;
  sealedToken: Uint8Array;
}

export type Decision = 'approve' | 'reject';

/**
 * What the card put before the approver, recorded with the decision for the audit: each call
 * and whether a preview was captured for it. The per-viewer read gate is not re-run here: it
 * would cost a record read per previewing call on the resume path.
 */
export interface CardShown {
  calls: Array<{
    index: number;
    tool: string;
    arguments: unknown;
    preview: 'captured' | 'refused' | 'failed' | 'none';
  }>;
}

/** The append-only audit record of a decision; it is also the exactly-once claim. */
export interface DecisionRecord {
  runId: string;
  turn: number;
  /** `cancel`: the run was cancelled while this turn waited; it takes the claim so no approval can. */
  decision: Decision | 'cancel';
  digest: string;
  decidedBy: string;
  decidedAt: string;
  reason?: string;
  cardShown: CardShown;
  /** The distinct approvers whose approvals released the turn (k-of-n, K > 1), sorted. */
  approvedBy?: string[];
}

/**
 * One approver's approval of one turn (k-of-n): claimed once per (run, turn, approver) with a
 * conditional write and kept for the audit. It names the digest it approved, so every approval
 * that counts toward a delivery is bound to the same turn.
 */
export interface ApprovalRecord {
  runId: string;
  turn: number;
  digest: string;
  approvedBy: string;
  approvedAt: string;
}

/**
 * Reads a decrypted approval card. A card of an unknown shape is refused; within a known
 * shape it degrades rather than fails (seed 000):
 * - pending calls that are not usable at all are dropped, which renumbers the rest;
 * - previews are translated from their stored positions onto the surviving list, and a
 *   preview whose call did not survive, or which names a different tool, is dropped;
 * - missing or malformed `callPreviews` mean "no preview": the run still resumes.
 */
export function parseApprovalCard(value: unknown): ApprovalCard {
  const header = approvalCardHeaderSchema.safeParse(value);
  if (!header.success) {
    throw new CountersignError('sealed-state-rejected', 'The sealed approval card has an unknown shape.');
  }
  const raw = value as { pendingCalls?: unknown; callPreviews?: unknown };
  const rawCalls = Array.isArray(raw.pendingCalls) ? raw.pendingCalls : [];
  const survivorPosition = new Map<number, number>();
  const pendingCalls: CardCall[] = [];
  rawCalls.forEach((rawCall, storedPosition) => {
    const parsed = cardCallSchema.safeParse(rawCall);
    if (!parsed.success || parsed.data.index !== storedPosition) return;
    survivorPosition.set(storedPosition, pendingCalls.length);
    pendingCalls.push({ ...parsed.data, index: pendingCalls.length });
  });
  const card: ApprovalCard = {
    schemaVersion: 1,
    runId: header.data.runId,
    turn: header.data.turn,
    digest: header.data.digest,
    pendingCalls,
  };
  if (!Array.isArray(raw.callPreviews)) return card;
  const callPreviews: CallPreview[] = [];
  for (const rawPreview of raw.callPreviews) {
    const parsed = callPreviewSchema.safeParse(rawPreview);
    if (!parsed.success) continue;
    const position = survivorPosition.get(parsed.data.index);
    if (position === undefined) continue;
    if (pendingCalls[position]?.tool !== parsed.data.tool) continue;
    callPreviews.push({ ...parsed.data, index: position });
  }
  card.callPreviews = callPreviews;
  return card;
}

const approvalCardHeaderSchema = z.object({
  schemaVersion: z.literal(APPROVAL_CARD_SCHEMA_VERSION),
  runId: z.string().check(z.minLength(1)),
  turn: z.number().check(z.int(), z.nonnegative()),
  digest: z.string().check(z.minLength(1)),
});
