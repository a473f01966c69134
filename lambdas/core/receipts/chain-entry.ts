import * as z from 'zod/mini';
import { refusingPrototypeKeys } from '../persisted-shape.js';
import { DECISION_GATES, requiredApprovalsSchema } from '../policy/policy-floor.js';

/**
 * One entry of a run's receipt chain (docs/receipts.md): every k-of-n approval, decision, edit,
 * cancel and expiry of the run, each naming the hash of the entry before it. It is stored as
 * written and served as stored, so this schema is both the persisted shape (fixtures:
 * `test/fixtures/chain-entry/`) and the format an offline verifier reads. Strict at every depth:
 * a field added to a receipt is a tampered receipt, not a field to ignore.
 *
 * Version 3 binds each call's choice in approvals and decisions (`choices`) and records edits
 * (kind `edit`); version 2 was never written (it was the refused future version while version 1
 * was current, and its fixture stays refused); version 1 entries still verify as written. A chain
 * may hold both: a run decided across the upgrade.
 */
export const CHAIN_ENTRY_SCHEMA_VERSION = 3;

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

function linkFieldsOf<Version extends 1 | typeof CHAIN_ENTRY_SCHEMA_VERSION>(version: Version) {
  return {
    schemaVersion: z.literal(version),
    runId: identifierSchema,
    /** The entry's position in its run's chain, from 0, without gaps. */
    sequence: z.number().check(z.int(), z.nonnegative()),
    /** The hash of the entry at `sequence - 1`; null for the first entry. */
    previousHash: z.nullable(hashSchema),
    recordedAt: timeSchema,
    turn: turnSchema,
  };
}

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

/** A turn holds at most this many calls (MAX_TURN_CALLS): an entry names each at most once. */
const MAX_ENTRY_CALLS = 50;
const callIndexSchema = z.number().check(z.int(), z.nonnegative(), z.lt(MAX_ENTRY_CALLS));

/**
 * What an approval or a decision did with one call (version 3). A rejected call's reason is bound
 * by its hash, not written: a receipt may be handed outside the team, and a reason is the team's
 * own words (the audit, readable by the receipt's readers in countersign, holds the text).
 */
export const callChoiceEntrySchema = z.strictObject({
  index: callIndexSchema,
  decision: z.enum(['approve', 'reject']),
  /** SHA-256 of this call's rejection reason (UTF-8), when the approver gave one. */
  reasonHash: z.optional(hashSchema),
});
export type CallChoiceEntry = z.infer<typeof callChoiceEntrySchema>;
const callChoicesSchema = z.array(callChoiceEntrySchema).check(z.minLength(1), z.maxLength(MAX_ENTRY_CALLS));

/** One call an edit rewrote (version 3): its index and the hashes of its new and its original arguments. */
export const callEditEntrySchema = z.strictObject({
  index: callIndexSchema,
  /** SHA-256 of the canonical JSON of the arguments the approver wrote. */
  argumentsHash: hashSchema,
  /** SHA-256 of the canonical JSON of the arguments the card showed (the model's, or an earlier edit's). */
  originalArgumentsHash: hashSchema,
});
export type CallEditEntry = z.infer<typeof callEditEntrySchema>;

/** The entry schemas of one version: version 3 adds per-call choices and the edit. */
function entrySchemasOf<Version extends 1 | typeof CHAIN_ENTRY_SCHEMA_VERSION>(version: Version) {
  const linkFields = linkFieldsOf(version);
  return {
    /** One approver's approval of a k-of-n turn. */
    approval: z.strictObject({
      ...linkFields,
      kind: z.literal('approval'),
      approver: receiptPersonSchema,
      approvedAt: timeSchema,
      ...cardFields,
      ...signatureFields,
    }),
    /** The decision that released or refused a turn: its claim, as the decision record holds it. */
    decision: z.strictObject({
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
    }),
    /** The run was cancelled (recorded by the function that cancels: chained, not signed). */
    cancel: z.strictObject({
      ...linkFields,
      kind: z.literal('cancel'),
      cancelledBy: receiptPersonSchema,
      cancelledAt: timeSchema,
      reasonHash: z.optional(hashSchema),
    }),
    /** The approval wait ran out (recorded by the function that expires runs: chained, not signed). */
    expiry: z.strictObject({
      ...linkFields,
      kind: z.literal('expiry'),
      expiredAt: timeSchema,
    }),
  };
}

const version1 = entrySchemasOf(1);
const current = entrySchemasOf(CHAIN_ENTRY_SCHEMA_VERSION);

/** An approval: version 3 names the choice it made for each call when it approved some only. */
export const approvalEntrySchema = z.strictObject({
  ...current.approval.shape,
  /** Absent: every call approved (an approval of the whole turn). */
  choices: z.optional(callChoicesSchema),
});

/** A decision: version 3 names the choice it made for each call of the card, every call once. */
export const decisionEntrySchema = z.strictObject({ ...current.decision.shape, choices: callChoicesSchema });

/**
 * An approver's edit (`decision: "edit"`): the turn's decision, which released and refused
 * nothing and put the edited calls on a fresh card. Signed by the deciding function like a
 * decision; it stands in the chain where the turn's decision would (one per turn).
 */
export const editEntrySchema = z.strictObject({
  ...linkFieldsOf(CHAIN_ENTRY_SCHEMA_VERSION),
  kind: z.literal('edit'),
  editedBy: receiptPersonSchema,
  editedAt: timeSchema,
  /** SHA-256 of the decision record's account of the card that was edited (as a decision's). */
  callsHash: hashSchema,
  edits: z.array(callEditEntrySchema).check(z.minLength(1), z.maxLength(MAX_ENTRY_CALLS)),
  ...cardFields,
  ...signatureFields,
});

export const cancelEntrySchema = current.cancel;
export const expiryEntrySchema = current.expiry;

/** The entries this version appends. */
export const currentChainEntrySchema = z.discriminatedUnion('kind', [
  approvalEntrySchema,
  decisionEntrySchema,
  editEntrySchema,
  cancelEntrySchema,
  expiryEntrySchema,
]);

/** Version 1 entries, as they were written (and signed): read and verified as they are. */
const version1ChainEntrySchema = z.discriminatedUnion('kind', [
  version1.approval,
  version1.decision,
  version1.cancel,
  version1.expiry,
]);

export const chainEntrySchema = z.discriminatedUnion('schemaVersion', [
  version1ChainEntrySchema,
  currentChainEntrySchema,
]);
export type ChainEntry = z.infer<typeof chainEntrySchema>;
export type CurrentChainEntry = z.infer<typeof currentChainEntrySchema>;
export type ChainEntryKind = ChainEntry['kind'];
export type ApprovalEntry = Extract<ChainEntry, { kind: 'approval' }>;
export type DecisionEntry = Extract<ChainEntry, { kind: 'decision' }>;
export type EditEntry = z.infer<typeof editEntrySchema>;

/** The entries the deciding function records, and signs: the others are chained only. */
export type SignedChainEntry = Extract<ChainEntry, { kind: 'approval' | 'decision' | 'edit' }>;

export function isSignedEntry(entry: ChainEntry): entry is SignedChainEntry {
  return entry.kind === 'approval' || entry.kind === 'decision' || entry.kind === 'edit';
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
