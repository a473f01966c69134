import { canonicalJson, sha256Hex } from '../canonical-json.js';
import type { ChainEntry, PolicyInForce, SignedChainEntry } from './chain-entry.js';

/**
 * What the signature of an entry covers: the entry without its `signature` (its `signer` stays).
 * Signed entries are what they are before they are signed: the content is built first.
 */
export type SignedContent<Entry extends SignedChainEntry = SignedChainEntry> = Omit<Entry, 'signature'>;

/**
 * `sha256:<hex>` of a value's canonical JSON (RFC 8785): how a receipt binds arguments without
 * writing them.
 *
 * @example
 * hashJson({ pageId: '12', title: 'Spring sale' })
 */
export function hashJson(value: unknown): string {
  return hashOf(canonicalJson(value ?? null));
}

/**
 * Names the bytes a receipt signature is over, so they cannot be mistaken for anything else
 * signed. `v1` is the signing scheme, not the entry's version (the content names that).
 */
const SIGNED_MESSAGE_PREFIX = 'countersign-receipt-entry:v1:';

/**
 * `sha256:<hex>` of a UTF-8 text or bytes, the form every hash in a receipt takes.
 *
 * @example
 * hashOf('') // 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
 */
export function hashOf(value: string | Uint8Array): string {
  return `sha256:${sha256Hex(value)}`;
}

/**
 * An entry's hash, which the next entry names as its `previousHash`: SHA-256 of the entry's
 * canonical JSON (RFC 8785), exactly as the receipt holds it, signature included.
 *
 * @example
 * const next = { ...draft, previousHash: hashEntry(chain.at(-1)) };
 */
export function hashEntry(entry: ChainEntry): string {
  return hashOf(canonicalJson(entry));
}

/**
 * The bytes a signature is over: a fixed prefix and the SHA-256 of the entry's canonical content.
 * Short on purpose: KMS `Sign` takes a RAW message of at most 4,096 bytes, and an entry with ten
 * approvers can be longer; the SHA-256 of the content binds all of it.
 *
 * @example
 * await signer.sign(signedMessageOf(content)) // DER-encoded ECDSA P-256 over SHA-256 of these bytes
 */
export function signedMessageOf(content: Omit<SignedChainEntry, 'signature'>): Uint8Array {
  return new TextEncoder().encode(`${SIGNED_MESSAGE_PREFIX}${hashOf(canonicalJson(content))}`);
}

/** The content of a signed entry: everything its signature covers. */
export function signedContentOf<Entry extends SignedChainEntry>(entry: Entry): SignedContent<Entry> {
  const { signature: _signature, ...content } = entry;
  return content;
}

/** The hash an entry writes beside its policy, so two entries decided under one policy say so at a glance. */
export function hashPolicy(policy: PolicyInForce): string {
  return hashOf(canonicalJson(policy));
}
