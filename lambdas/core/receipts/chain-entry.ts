import * as z from 'zod/mini';
import { refusingPrototypeKeys } from '../persisted-shape.js';
import { DECISION_GATES, requiredApprovalsSchema } from '../policy/policy-floor.js';

/**
 * One entry of a run's receipt chain (docs/receipts.md): every k-of-n approval, decision, cancel
 * and expiry of the run, each naming the hash of the entry before it. It is stored as written and
 * served as stored, so this schema is both the persisted shape (fixtures:
 * `test/fixtures/chain-entry/`) and the format an offline verifier reads. Strict at every depth:
 * a field added to a receipt is a tampered receipt, not a field to ignore.
 */
export const CHAIN_ENTRY_SCHEMA_VERSION = 1;

/** The only signing algorithm: KMS `ECDSA_SHA_256` on an `ECC_NIST_P256` key (locally, a P-256 key). */
export const RECEIPT_SIGNING_ALGORITHM = 'ECDSA_SHA_256';

/** `sha256:` and 64 lower-case hex digits, as the turn digest writes a hash. */
export const hashSchema = z.string().check(z.regex(/^sha256:[0-9a-f]{64}$/, 'a sha256:<hex> hash'));
const timeSchema = z.iso.datetime();
const identifierSchema = z.string().check(z.minLength(1), z.maxLength(200));
const turnSchema = z.number().check(z.int(), z.nonnegative(), z.lte(999_999));

/**
 * A person in a receipt: countersign's user id and the identity provider subject (`sub`) they
 * signed in as. They are the same string today (a user record is keyed by its `sub`); both are
 * written so a receipt reads the same when a channel maps another identity to a user.
 */
export const receiptPersonSchema = z.strictObject({ userId: identifierSchema, subject: identifierSchema });
export type ReceiptPerson = z.infer<typeof receiptPersonSchema>;

/** The policy a turn was decided under: the card's own raised to the deployment's floor, and its routing. */
export const policyInForceSchema = z.strictObject({
  fourEyes: z.boolean(),
  requiredApprovals: requiredApprovalsSchema,
  decisionGate: z.enum(DECISION_GATES),
  /** The approver groups the card was routed to, sorted; empty: every approver. */
  approverGroups: z.array(identifierSchema).check(z.maxLength(10)),
});
export type PolicyInForce = z.infer<typeof policyInForceSchema>;

const signerSchema = z.strictObject({
  /** The KMS key ARN (deployed) or `local:` and the SPKI fingerprint of the local key. */
  keyId: z.string().check(z.minLength(1), z.maxLength(2048)),
  algorithm: z.literal(RECEIPT_SIGNING_ALGORITHM),
});

/**
 * An ECDSA signature, DER-encoded (what KMS `Sign` returns), in canonical base64: the unused bits
 * before `=` padding are zero, so one signature has one spelling and an entry one hash.
 */
const signatureSchema = z.base64().check(
  z.minLength(8),
  z.maxLength(200),
  z.refine((text) => Buffer.from(text, 'base64').toString('base64') === text, 'canonical base64'),
);

const linkFields = {
  schemaVersion: z.literal(CHAIN_ENTRY_SCHEMA_VERSION),
  runId: identifierSchema,
  /** The entry's position in its run's chain, from 0, without gaps. */
  sequence: z.number().check(z.int(), z.nonnegative()),
  /** The hash of the entry at `sequence - 1`; null for the first entry. */
  previousHash: z.nullable(hashSchema),
  recordedAt: timeSchema,
  turn: turnSchema,
};

/** What the deciding function signs an approval or a decision against: the card as it was shown. */
const cardFields = {
  /** The turn digest the approver named (run, turn, calls and preconditions). */
  digest: z.string().check(z.minLength(1), z.maxLength(200)),
  /** When the card appeared (the run paused). */
  cardShownAt: timeSchema,
  /**
   * SHA-256 of the sealed card (its Encryption SDK message): the calls with the previews the
   * approver was shown. The committing suite lets those bytes open to one plaintext only, so the
   * hash binds the previews without letting a receipt reader guess them.
   */
  sealedCardHash: hashSchema,
  policy: policyInForceSchema,
  /** SHA-256 of the canonical `policy`. */
  policyHash: hashSchema,
  /** Where the approver decided, when the record says (`api`, `slack`). */
  channel: z.optional(z.string().check(z.minLength(1), z.maxLength(40))),
};

/** The signer is part of the signed content; the signature is over everything but itself. */
const signatureFields = {
  signer: signerSchema,
  signature: signatureSchema,
};

/** One approver's approval of a k-of-n turn. */
export const approvalEntrySchema = z.strictObject({
  ...linkFields,
  kind: z.literal('approval'),
  approver: receiptPersonSchema,
  approvedAt: timeSchema,
  ...cardFields,
  ...signatureFields,
});

/** The decision that released or refused a turn: its claim, as the decision record holds it. */
export const decisionEntrySchema = z.strictObject({
  ...linkFields,
  kind: z.literal('decision'),
  decision: z.enum(['approve', 'reject']),
  decidedBy: receiptPersonSchema,
  /** k-of-n: the approvers whose approvals released the turn; otherwise the decider alone. */
  approvers: z.array(receiptPersonSchema).check(z.minLength(1), z.maxLength(10)),
  decidedAt: timeSchema,
  /** SHA-256 of the decision record's account of the card: each call, its arguments, its preview's state. */
  callsHash: hashSchema,
  /** SHA-256 of the approver's reason (UTF-8), when they gave one: bound, not disclosed. */
  reasonHash: z.optional(hashSchema),
  ...cardFields,
  ...signatureFields,
});

/** The run was cancelled (recorded by the function that cancels: chained, not signed). */
export const cancelEntrySchema = z.strictObject({
  ...linkFields,
  kind: z.literal('cancel'),
  cancelledBy: receiptPersonSchema,
  cancelledAt: timeSchema,
  reasonHash: z.optional(hashSchema),
});

/** The approval wait ran out (recorded by the function that expires runs: chained, not signed). */
export const expiryEntrySchema = z.strictObject({
  ...linkFields,
  kind: z.literal('expiry'),
  expiredAt: timeSchema,
});

export const chainEntrySchema = z.discriminatedUnion('kind', [
  approvalEntrySchema,
  decisionEntrySchema,
  cancelEntrySchema,
  expiryEntrySchema,
]);
export type ChainEntry = z.infer<typeof chainEntrySchema>;
export type ChainEntryKind = ChainEntry['kind'];
export type ApprovalEntry = z.infer<typeof approvalEntrySchema>;
export type DecisionEntry = z.infer<typeof decisionEntrySchema>;

/** The entries the deciding function records, and signs: the others are chained only. */
export type SignedChainEntry = ApprovalEntry | DecisionEntry;

export function isSignedEntry(entry: ChainEntry): entry is SignedChainEntry {
  return entry.kind === 'approval' || entry.kind === 'decision';
}

/** Reads a stored entry; a future version, an unknown field or a prototype key does not parse. */
export const readableChainEntrySchema = refusingPrototypeKeys<ChainEntry>(chainEntrySchema);

/** The receipt format's name and version, as `GET /runs/{id}/receipt` writes them. */
export const RECEIPT_FORMAT = 'countersign-receipt';
export const RECEIPT_FORMAT_VERSION = 1;

/**
 * A run's receipt: its chain, oldest first (`GET /runs/{id}/receipt`; `countersign verify`).
 * Entries are kept as read (`unknown`): the verifier parses each one and names the one that fails.
 */
export const receiptSchema = z.strictObject({
  format: z.literal(RECEIPT_FORMAT),
  formatVersion: z.literal(RECEIPT_FORMAT_VERSION),
  runId: identifierSchema,
  entries: z.array(z.unknown()).check(z.maxLength(100_000)),
});
export interface Receipt {
  format: typeof RECEIPT_FORMAT;
  formatVersion: typeof RECEIPT_FORMAT_VERSION;
  runId: string;
  entries: ChainEntry[];
}
