import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Blob format 2 of the envelope sealer: the body is sealed with one `node:crypto` AES-256-GCM
 * call under a per-blob key, instead of an Encryption SDK message, whose fixed per-message cost
 * and stream copies were 12-23x raw AES-GCM (issue #12). The sealing key is wrapped by KMS
 * (or the local keyring) directly, or, for a key first met in a format 1 blob, by the
 * Encryption SDK as format 1 wrapped it (`key-wrapping.ts`); this file never sees a KMS key.
 *
 * ```
 * offset  bytes  field
 * 0       3      magic "CSE"
 * 3       1      version = 2
 * 4       1      key wrapping: 1 = an Encryption SDK message (as format 1), 2 = direct (KMS)
 * 5       4      W: byte length of the wrapped sealing key (uint32 BE, 1..16384)
 * 9       W      wrapped sealing key
 * 9+W     2+r    run id (uint16 BE length 1..1024, UTF-8)
 *         2+p    purpose (uint16 BE length 1..64, UTF-8)
 *         2+e    encoding (uint16 BE length 1..16, "brotli" or "identity")
 *         4      n: byte length of the ciphertext (uint32 BE, at most 64 MiB)
 *         32     salt (random per blob)
 *         12     nonce (random per blob)
 *         32     key commitment
 *         n      ciphertext
 *         16     GCM tag (the blob ends here: a byte missing or added is refused)
 * ```
 *
 * The per-blob keys: HKDF-SHA512(sealing key, salt, info = "countersign sealed blob v2", 0x00,
 * canonical context) gives 64 bytes, the AES key and the commitment. The canonical context is
 * the three length-prefixed fields exactly as the header holds them, so a blob read under
 * another run, purpose or encoding derives other keys, and the GCM additional data is the
 * whole header up to the ciphertext (version, key wrapping, wrapped key, context, length,
 * salt, nonce, commitment).
 * The commitment is compared in constant time before decrypting, so one ciphertext cannot open
 * under two sealing keys. A random 96-bit nonce under a key used for this one blob only cannot
 * repeat a (key, nonce) pair.
 */
export const BLOB_VERSION_2 = 2;
export type BlobEncoding = 'brotli' | 'identity';
/** How the blob's sealing key is wrapped: by the Encryption SDK (1) or directly (2). */
export type SealingKeyWrapping = 1 | 2;

/** "CSE": the first bytes of every sealed blob, of either format (envelope-sealer.ts reads format 1). */
export const BLOB_MAGIC = [0x43, 0x53, 0x45] as const;
const WRAPPING_OFFSET = BLOB_MAGIC.length + 1;
const WRAPPED_LENGTH_OFFSET = WRAPPING_OFFSET + 1;
const PREFIX_BYTES = WRAPPED_LENGTH_OFFSET + 4;
/** A wrapped sealing key is a few hundred bytes; anything much larger is not one (both formats). */
export const MAX_WRAPPED_KEY_BYTES = 16 * 1024;
const MAX_RUN_ID_BYTES = 1024;
const MAX_PURPOSE_BYTES = 64;
const MAX_ENCODING_BYTES = 16;
const LENGTH_BYTES = 4;
const SALT_BYTES = 32;
const NONCE_BYTES = 12;
const COMMITMENT_BYTES = 32;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const DERIVATION_LABEL = Buffer.from('countersign sealed blob v2\u0000', 'utf8');
const ENCODINGS: ReadonlySet<string> = new Set<BlobEncoding>(['brotli', 'identity']);

export interface BlobContextV2 {
  readonly runId: string;
  readonly purpose: string;
  readonly encoding: BlobEncoding;
}

/** Why a blob is refused; the sealer turns each into a `sealed-state-rejected` reason. */
export type BlobRefusalV2 =
  | 'truncated'
  | 'malformed'
  | 'another-run'
  | 'another-purpose'
  | 'unknown-encoding'
  | 'wrong-commitment'
  | 'failed-authentication';

/** A version 2 blob whose bounds are checked and whose context matched; not yet authenticated. */
export interface ParsedBlobV2 {
  readonly keyWrapping: SealingKeyWrapping;
  readonly wrappedKey: Uint8Array;
  readonly encoding: BlobEncoding;
  /** The canonical context: the three length-prefixed fields as the header holds them. */
  readonly context: Uint8Array;
  /** Everything before the ciphertext: the GCM additional data. */
  readonly header: Uint8Array;
  readonly salt: Uint8Array;
  readonly nonce: Uint8Array;
  readonly commitment: Uint8Array;
  readonly ciphertext: Uint8Array;
  readonly tag: Uint8Array;
}

/** Seals `body` (already compressed or not, as `context.encoding` says) into a version 2 blob. */
export function sealBlobV2(
  sealingKey: Uint8Array,
  keyWrapping: SealingKeyWrapping,
  wrappedKey: Uint8Array,
  context: BlobContextV2,
  body: Uint8Array,
  maxBodyBytes: number,
): Uint8Array {
  const contextBytes = encodeContext(context);
  if (wrappedKey.byteLength === 0 || wrappedKey.byteLength > MAX_WRAPPED_KEY_BYTES || !contextBytes) {
    throw new RangeError('The wrapped key or the context is outside the bounds of blob format 2.');
  }
  if (body.byteLength > maxBodyBytes) throw new RangeError('The body is larger than a blob may hold.');
  const lengthOffset = PREFIX_BYTES + wrappedKey.byteLength + contextBytes.byteLength;
  const headerBytes = lengthOffset + LENGTH_BYTES + SALT_BYTES;
  const ciphertextOffset = headerBytes + NONCE_BYTES + COMMITMENT_BYTES;
  const blob = Buffer.allocUnsafeSlow(ciphertextOffset + body.byteLength + TAG_BYTES);
  blob.set(BLOB_MAGIC, 0);
  blob[BLOB_MAGIC.length] = BLOB_VERSION_2;
  blob[WRAPPING_OFFSET] = keyWrapping;
  blob.writeUInt32BE(wrappedKey.byteLength, WRAPPED_LENGTH_OFFSET);
  blob.set(wrappedKey, PREFIX_BYTES);
  blob.set(contextBytes, PREFIX_BYTES + wrappedKey.byteLength);
  blob.writeUInt32BE(body.byteLength, lengthOffset);
  const salt = blob.subarray(headerBytes - SALT_BYTES, headerBytes);
  const nonce = blob.subarray(headerBytes, headerBytes + NONCE_BYTES);
  // Salt and nonce in one draw: both random, never derived from anything an attacker chooses.
  randomBytes(SALT_BYTES + NONCE_BYTES).copy(blob, headerBytes - SALT_BYTES);
  const { encryptionKey, commitment } = deriveBlobKeys(sealingKey, salt, contextBytes);
  blob.set(commitment, headerBytes + NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', encryptionKey, nonce);
  cipher.setAAD(blob.subarray(0, ciphertextOffset));
  const ciphertext = cipher.update(body);
  cipher.final();
  blob.set(ciphertext, ciphertextOffset);
  blob.set(cipher.getAuthTag(), ciphertextOffset + ciphertext.byteLength);
  return new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength);
}

/**
 * Parses a version 2 blob and checks that it was sealed for `runId` and `purpose`, before any
 * key is unwrapped: every length is checked against what remains, so a forged header can
 * neither read past the blob nor make this process allocate.
 */
export function parseBlobV2(
  sealed: Uint8Array,
  expected: { runId: string; purpose: string },
  maxBodyBytes: number,
): ParsedBlobV2 | { refused: BlobRefusalV2 } {
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (bytes.byteLength < PREFIX_BYTES) return { refused: 'truncated' };
  if (
    BLOB_MAGIC.some((byte, index) => bytes[index] !== byte) ||
    bytes[BLOB_MAGIC.length] !== BLOB_VERSION_2
  ) {
    return { refused: 'malformed' };
  }
  const keyWrapping = bytes[WRAPPING_OFFSET];
  if (keyWrapping !== 1 && keyWrapping !== 2) return { refused: 'malformed' };
  const wrappedLength = bytes.readUInt32BE(WRAPPED_LENGTH_OFFSET);
  if (wrappedLength === 0 || wrappedLength > MAX_WRAPPED_KEY_BYTES) return { refused: 'malformed' };
  let offset = PREFIX_BYTES + wrappedLength;
  const fields: Buffer[] = [];
  for (const maxLength of [MAX_RUN_ID_BYTES, MAX_PURPOSE_BYTES, MAX_ENCODING_BYTES]) {
    if (bytes.byteLength < offset + 2) return { refused: 'truncated' };
    const length = bytes.readUInt16BE(offset);
    if (length === 0 || length > maxLength) return { refused: 'malformed' };
    if (bytes.byteLength < offset + 2 + length) return { refused: 'truncated' };
    fields.push(bytes.subarray(offset + 2, offset + 2 + length));
    offset += 2 + length;
  }
  const [runId, purpose, encoding] = fields as [Buffer, Buffer, Buffer];
  const contextEnd = offset;
  if (bytes.byteLength < offset + LENGTH_BYTES) return { refused: 'truncated' };
  const ciphertextLength = bytes.readUInt32BE(offset);
  if (ciphertextLength > maxBodyBytes) return { refused: 'malformed' };
  offset += LENGTH_BYTES;
  const ciphertextOffset = offset + SALT_BYTES + NONCE_BYTES + COMMITMENT_BYTES;
  const expectedLength = ciphertextOffset + ciphertextLength + TAG_BYTES;
  if (bytes.byteLength < expectedLength) return { refused: 'truncated' };
  if (bytes.byteLength > expectedLength) return { refused: 'malformed' };
  if (!runId.equals(Buffer.from(expected.runId, 'utf8'))) return { refused: 'another-run' };
  if (!purpose.equals(Buffer.from(expected.purpose, 'utf8'))) return { refused: 'another-purpose' };
  const encodingName = encoding.toString('latin1');
  if (!ENCODINGS.has(encodingName)) return { refused: 'unknown-encoding' };
  return {
    keyWrapping,
    wrappedKey: bytes.subarray(PREFIX_BYTES, PREFIX_BYTES + wrappedLength),
    encoding: encodingName as BlobEncoding,
    context: bytes.subarray(PREFIX_BYTES + wrappedLength, contextEnd),
    header: bytes.subarray(0, ciphertextOffset),
    salt: bytes.subarray(offset, offset + SALT_BYTES),
    nonce: bytes.subarray(offset + SALT_BYTES, offset + SALT_BYTES + NONCE_BYTES),
    commitment: bytes.subarray(offset + SALT_BYTES + NONCE_BYTES, ciphertextOffset),
    ciphertext: bytes.subarray(ciphertextOffset, ciphertextOffset + ciphertextLength),
    tag: bytes.subarray(ciphertextOffset + ciphertextLength),
  };
}

/** Checks the key commitment, then decrypts and authenticates the body. */
export function openBlobV2(
  sealingKey: Uint8Array,
  parsed: ParsedBlobV2,
): { body: Uint8Array } | { refused: BlobRefusalV2 } {
  const { encryptionKey, commitment } = deriveBlobKeys(sealingKey, parsed.salt, parsed.context);
  if (!timingSafeEqual(commitment, parsed.commitment)) return { refused: 'wrong-commitment' };
  const decipher = createDecipheriv('aes-256-gcm', encryptionKey, parsed.nonce, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(parsed.tag);
  decipher.setAAD(parsed.header);
  const body = decipher.update(parsed.ciphertext);
  try {
    decipher.final();
  } catch {
    // The unauthenticated plaintext in `body` is dropped here, never returned.
    return { refused: 'failed-authentication' };
  }
  return { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) };
}

function deriveBlobKeys(
  sealingKey: Uint8Array,
  salt: Uint8Array,
  context: Uint8Array,
): { encryptionKey: Buffer; commitment: Buffer } {
  const derived = Buffer.from(
    hkdfSync(
      'sha512',
      sealingKey,
      salt,
      Buffer.concat([DERIVATION_LABEL, context]),
      KEY_BYTES + COMMITMENT_BYTES,
    ),
  );
  return { encryptionKey: derived.subarray(0, KEY_BYTES), commitment: derived.subarray(KEY_BYTES) };
}

/** The canonical context: each field as uint16 BE length and UTF-8; undefined when out of bounds. */
function encodeContext(context: BlobContextV2): Buffer | undefined {
  const fields = [
    [Buffer.from(context.runId, 'utf8'), MAX_RUN_ID_BYTES],
    [Buffer.from(context.purpose, 'utf8'), MAX_PURPOSE_BYTES],
    [Buffer.from(context.encoding, 'utf8'), MAX_ENCODING_BYTES],
  ] as const;
  const parts: Buffer[] = [];
  for (const [field, maxLength] of fields) {
    if (field.byteLength === 0 || field.byteLength > maxLength) return undefined;
    const length = Buffer.allocUnsafe(2);
    length.writeUInt16BE(field.byteLength);
    parts.push(length, field);
  }
  return Buffer.concat(parts);
}
