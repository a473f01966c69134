import { type KeyObject, verify } from 'node:crypto';
import { formatSchemaIssues } from '../schema-messages.js';
import {
  type ChainEntry,
  isSignedEntry,
  readableChainEntrySchema,
  receiptSchema,
  type SignedChainEntry,
} from './chain-entry.js';
import { hashEntry, hashPolicy, signedContentOf, signedMessageOf } from './entry-hashes.js';

/** The checks a receipt passes, in the order they are made (docs/receipts.md, "Verifying"). */
export const RECEIPT_CHECKS = [
  'format',
  'key',
  'run',
  'sequence',
  'chain',
  'policy',
  'calls',
  'signature',
] as const;
export type ReceiptCheck = (typeof RECEIPT_CHECKS)[number];

/** The public key a receipt is verified against, and the key id its signed entries must name, when known. */
export interface ReceiptKey {
  publicKey: KeyObject;
  /** The KMS key ARN the key was fetched for (`--key-id`); absent: any signer id (a PEM file). */
  keyId?: string;
}

/** One entry as the verifier found it, for a person to read. */
export interface VerifiedEntry {
  sequence: number;
  kind: ChainEntry['kind'];
  turn: number;
  /** The approver, the decider, the editor, or who cancelled; absent for an expiry. */
  by?: string;
  decision?: 'approve' | 'reject';
  /** A decision's approvers (k-of-n), or the approver of an approval. */
  approvers?: string[];
  /** The calls an approval or a decision refused (entry version 3), when it refused some. */
  refusedCalls?: number[];
  /** The calls an edit rewrote. */
  editedCalls?: number[];
  at: string;
  signed: boolean;
}

export type ReceiptVerification =
  | {
      kind: 'verified';
      runId: string;
      entries: VerifiedEntry[];
      /**
       * Entries after the last signed one: chained, so none can be changed or removed from the
       * middle, but a receipt cut short after its last signature cannot be told from one that
       * ended there (docs/receipts.md, "What a receipt proves").
       */
      unsignedTail: number;
    }
  | {
      kind: 'failed';
      check: ReceiptCheck;
      /** The position in `entries` of the entry that failed; absent for the receipt as a whole. */
      entry?: number;
      message: string;
    };

/**
 * Verifies a run's receipt offline: the receipt's shape, then each entry in order: its shape,
 * its run, its sequence (no gap, no repeat, no reordering), the hash of the entry before it, its
 * policy hash, the calls a version 3 entry names, and for an approval, a decision or an edit the signature (ECDSA P-256 over SHA-256, DER,
 * as KMS `Sign` returns it) against `key`. The first check that fails is named with the entry.
 * A pure function of its inputs: the CLI (`countersign verify`) and the tests share it.
 *
 * @example
 * const verification = verifyReceipt(JSON.parse(text), { publicKey: createPublicKey(pem) }, { runId });
 * if (verification.kind === 'failed') console.error(verification.check, verification.message);
 */
export function verifyReceipt(
  receipt: unknown,
  key: ReceiptKey,
  options: {
    /** The run the receipt is expected to be of: a receipt of another run fails the `run` check. */
    runId?: string;
  } = {},
): ReceiptVerification {
  const document = receiptSchema.safeParse(receipt);
  if (!document.success) {
    return failed(
      'format',
      `The receipt is not a countersign receipt: ${formatSchemaIssues(document.error.issues.slice(0, 1))}.`,
    );
  }
  if (!isP256PublicKey(key.publicKey)) {
    return failed('key', 'The public key is not an ECC_NIST_P256 (P-256) key.');
  }
  const { runId } = document.data;
  if (options.runId !== undefined && options.runId !== runId) {
    return failed('run', `The receipt is of run "${runId}", not of run "${options.runId}".`);
  }
  const verified: VerifiedEntry[] = [];
  let previous: ChainEntry | undefined;
  for (const [position, raw] of document.data.entries.entries()) {
    const parsed = readableChainEntrySchema.safeParse(raw);
    if (!parsed.success) {
      return failed(
        'format',
        `Entry ${position} is not a chain entry: ${formatSchemaIssues(parsed.error.issues.slice(0, 1))}.`,
        position,
      );
    }
    const entry = parsed.data;
    const problem = checkEntry(entry, position, previous, runId, key);
    if (problem) return { kind: 'failed', ...problem, entry: position };
    verified.push(toVerifiedEntry(entry));
    previous = entry;
  }
  const lastSigned = verified.findLastIndex((entry) => entry.signed);
  return { kind: 'verified', runId, entries: verified, unsignedTail: verified.length - 1 - lastSigned };
}

function checkEntry(
  entry: ChainEntry,
  position: number,
  previous: ChainEntry | undefined,
  runId: string,
  key: ReceiptKey,
): { check: ReceiptCheck; message: string } | undefined {
  if (entry.runId !== runId) {
    return { check: 'run', message: `Entry ${position} is of run "${entry.runId}", not of run "${runId}".` };
  }
  if (entry.sequence !== position) {
    return {
      check: 'sequence',
      message: `Entry ${position} says it is entry ${entry.sequence}: an entry is missing, repeated or out of order.`,
    };
  }
  const expectedPrevious = previous === undefined ? null : hashEntry(previous);
  if (entry.previousHash !== expectedPrevious) {
    return {
      check: 'chain',
      message:
        previous === undefined
          ? `Entry ${position} names a previous entry, but it is the first.`
          : `Entry ${position} does not name the hash of entry ${position - 1}: one of them was changed.`,
    };
  }
  if (!isSignedEntry(entry)) return undefined;
  if (entry.policyHash !== hashPolicy(entry.policy)) {
    return { check: 'policy', message: `Entry ${position}'s policy does not match its policy hash.` };
  }
  const calls = findCallsProblem(entry);
  if (calls) return { check: 'calls', message: `Entry ${position} ${calls}` };
  if (key.keyId !== undefined && entry.signer.keyId !== key.keyId) {
    return {
      check: 'key',
      message: `Entry ${position} was signed with key "${entry.signer.keyId}", not with "${key.keyId}".`,
    };
  }
  if (!hasValidSignature(entry, key.publicKey)) {
    return {
      check: 'signature',
      message: `Entry ${position}'s signature does not verify: the entry was changed, or signed with another key.`,
    };
  }
  return undefined;
}

/**
 * What is wrong with the calls a version 3 entry names, read on their own: each call named once;
 * a decision's choices agree with its decision (an approval approves some call, a rejection none);
 * an edit changes each call it names. Anything else changed is the signature's to find.
 */
function findCallsProblem(entry: SignedChainEntry): string | undefined {
  if (entry.schemaVersion === 1) return undefined;
  const named = entry.kind === 'edit' ? entry.edits : (entry.choices ?? []);
  const indexes = named.map((call) => call.index);
  if (new Set(indexes).size !== indexes.length) return 'names a call twice.';
  if (entry.kind === 'edit') {
    const unchanged = entry.edits.find((edit) => edit.argumentsHash === edit.originalArgumentsHash);
    return unchanged && `says call ${unchanged.index} was edited to the arguments it had.`;
  }
  if (entry.kind !== 'decision') return undefined;
  const approves = entry.choices.some((choice) => choice.decision === 'approve');
  if (entry.decision === 'approve' && !approves) return 'is an approval that refuses every call.';
  if (entry.decision === 'reject' && approves) return 'is a rejection that approves a call.';
  return undefined;
}

function hasValidSignature(entry: SignedChainEntry, publicKey: KeyObject): boolean {
  try {
    return verify(
      'sha256',
      signedMessageOf(signedContentOf(entry)),
      { key: publicKey, dsaEncoding: 'der' },
      Buffer.from(entry.signature, 'base64'),
    );
  } catch {
    // A signature that is not even DER does not verify; it is not the verifier's failure.
    return false;
  }
}

function isP256PublicKey(publicKey: KeyObject): boolean {
  return (
    publicKey.type === 'public' &&
    publicKey.asymmetricKeyType === 'ec' &&
    publicKey.asymmetricKeyDetails?.namedCurve === 'prime256v1'
  );
}

function toVerifiedEntry(entry: ChainEntry): VerifiedEntry {
  const base = { sequence: entry.sequence, kind: entry.kind, turn: entry.turn, signed: isSignedEntry(entry) };
  switch (entry.kind) {
    case 'approval':
      return {
        ...base,
        by: entry.approver.userId,
        approvers: [entry.approver.userId],
        at: entry.approvedAt,
        ...refusedCallsOf(entry),
      };
    case 'decision':
      return {
        ...base,
        by: entry.decidedBy.userId,
        decision: entry.decision,
        approvers: entry.approvers.map((approver) => approver.userId),
        at: entry.decidedAt,
        ...refusedCallsOf(entry),
      };
    case 'edit':
      return {
        ...base,
        by: entry.editedBy.userId,
        at: entry.editedAt,
        editedCalls: entry.edits.map((edit) => edit.index),
      };
    case 'cancel':
      return { ...base, by: entry.cancelledBy.userId, at: entry.cancelledAt };
    case 'expiry':
      return { ...base, at: entry.expiredAt };
  }
}

/** The calls a version 3 approval or approve decision refused, when it refused some but not all. */
function refusedCallsOf(entry: SignedChainEntry): Pick<VerifiedEntry, 'refusedCalls'> {
  if (entry.kind === 'edit' || entry.schemaVersion === 1 || !entry.choices) return {};
  const refused = entry.choices
    .filter((choice) => choice.decision === 'reject')
    .map((choice) => choice.index);
  return refused.length > 0 && refused.length < entry.choices.length ? { refusedCalls: refused } : {};
}

function failed(check: ReceiptCheck, message: string, entry?: number): ReceiptVerification {
  return { kind: 'failed', check, message, ...(entry === undefined ? {} : { entry }) };
}
