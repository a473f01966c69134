import { z } from 'zod';

/**
 * What an approver's card needs, sealed apart from the transcript so that rendering the
 * inbox never decrypts a transcript. Schema-versioned like every persisted shape.
 */
export const APPROVAL_CARD_SCHEMA_VERSION = 1;

export const cardCallSchema = z.object({
  index: z.number().int().nonnegative(),
  tool: z.string(),
  arguments: z.unknown(),
});
export type CardCall = z.infer<typeof cardCallSchema>;

/** A write preview of one pending call (seed 000), bound to the call's index. */
export const callPreviewSchema = z.object({
  index: z.number().int().nonnegative(),
  tool: z.string(),
  lines: z.array(z.string()),
  failed: z.boolean(),
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
  revealRejectionReason: boolean;
  state: 'waiting' | 'decided';
  sealedCard: Uint8Array;
  sealedToken: Uint8Array;
}

export type Decision = 'approve' | 'reject';

/** What the approver was shown, recorded with the decision for the audit. */
export interface CardShown {
  calls: Array<{ index: number; tool: string; preview: 'shown' | 'withheld' | 'failed' | 'none' }>;
}

/** The append-only audit record of a decision; it is also the exactly-once claim. */
export interface DecisionRecord {
  runId: string;
  turn: number;
  decision: Decision;
  digest: string;
  decidedBy: string;
  decidedAt: string;
  reason?: string;
  cardShown: CardShown;
}
