import type { ChainEntry } from './chain-entry.js';

/**
 * Port: signs receipt entries. Deployed, KMS `Sign` with an asymmetric `ECC_NIST_P256` key of its
 * own (`ECDSA_SHA_256`) that only the deciding function may use; locally, a P-256 key created on
 * first start in the data directory. Either way the signature is ECDSA over SHA-256 of `message`,
 * DER-encoded, and verifies with Node's `crypto.verify` against the key's public half.
 */
export interface ReceiptSigner {
  /** The id written into each signed entry: the KMS key ARN, or `local:` and the key's fingerprint. */
  signingKeyId(): Promise<string>;
  sign(message: Uint8Array): Promise<Uint8Array>;
}

/** `sequence-taken`: another entry holds that position already (someone appended first). */
export type AppendOutcome = { kind: 'appended' } | { kind: 'sequence-taken' };

/**
 * Port: the receipt chains, one per run, in the run's partition (DynamoDB deployed, dynalite
 * locally). Entries are written once and never changed: an append is a conditional write on
 * (run, sequence), so of two writers that read the same chain only one extends it.
 */
export interface ReceiptChainStore {
  /**
   * Every entry of the run's chain in sequence order, as stored (without the item's key): the
   * receipt serves them as they are, so a verifier sees any change made to the table. Empty when
   * nothing was recorded.
   */
  readEntries(runId: string): Promise<unknown[]>;
  appendEntry(entry: ChainEntry): Promise<AppendOutcome>;
}
