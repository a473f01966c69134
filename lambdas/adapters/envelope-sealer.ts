import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, brotliDecompress, constants as zlibConstants } from 'node:zlib';
import type { KeyringNode, RawAesKeyringNode } from '@aws-crypto/client-node';
import { CountersignError } from '../core/errors.js';
import { type Clock, type SealPurpose, type StateSealer, systemClock } from '../core/ports.js';
import type { AwsCallCounter } from './aws-call-counter.js';
import { type KeyWrapping, SEALING_KEY_BYTES } from './key-wrapping.js';
import {
  BLOB_MAGIC,
  BLOB_VERSION_2,
  type BlobRefusalV2,
  MAX_WRAPPED_KEY_BYTES,
  openBlobV2,
  parseBlobV2,
  type SealingKeyWrapping,
  sealBlobV2,
} from './sealed-blob-v2.js';

export { createKmsKeyWrapping, type KeyWrapping, type KmsKeyWrappingProps } from './key-wrapping.js';

export interface EnvelopeSealerProps {
  readonly keyWrapping: KeyWrapping;
  /**
   * Where the local keyring's wraps and unwraps are recorded as `KMS:GenerateDataKey` and
   * `KMS:Decrypt`. With the KMS keyring, attach the counter to the KMS client instead
   * (`createKmsKeyWrapping({ callCounter })`): the sealer records nothing itself then.
   * @default - nothing is recorded
   */
  readonly callCounter?: AwsCallCounter;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Unwrapped sealing keys kept in memory. @default 64 */
  readonly maxCachedKeys?: number;
  /** How long an unwrapped sealing key stays in memory. @default 300000 (5 minutes) */
  readonly cachedKeyLifetimeMs?: number;
  /** Blobs one sealing key may seal before a new one is generated. @default 1000 */
  readonly maxBlobsPerSealingKey?: number;
  /** How long after this container obtained it a sealing key may seal new blobs. @default 300000 */
  readonly sealingKeyLifetimeMs?: number;
  /**
   * The blob format new blobs are sealed in. Version 1 (an Encryption SDK message per blob) is
   * kept so tests and the bench can seal what earlier containers stored.
   * @default 2
   */
  readonly blobVersion?: 1 | 2;
  /** Body frame length of version 1 blobs (tests seal old-format blobs with it). @default SEALING_FRAME_LENGTH */
  readonly frameLength?: number;
}

interface SealingKey {
  /** sha256 (hex) of the wrapping and the wrapped key: names the key in the cache and in the blob keyring. */
  readonly id: string;
  /** 2: wrapped by KMS (or the local keyring) directly; 1: by the Encryption SDK (format 1). */
  readonly wrapping: SealingKeyWrapping;
  readonly wrapped: Uint8Array;
  readonly keyBytes: Uint8Array;
  /** The Encryption SDK keyring over the key, built on the first version 1 blob only. */
  keyring?: RawAesKeyringNode;
  readonly obtainedAt: number;
  blobsSealed: number;
}

/** Format 1: an Encryption SDK message after the magic, version and wrapped key (format 2: `sealed-blob-v2.ts`). */
const BLOB_VERSION_1 = 1;
const HEADER_BYTES = BLOB_MAGIC.length + 1 + 4;
/** Bounds what a forged blob can make this process allocate. */
const MAX_PLAINTEXT_BYTES = 64 * 1024 * 1024;
/** `AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY`, format 1's suite. */
const SUITE = 0x0478;
/**
 * Body frame length of each blob. The ESDK's default 4 KiB frames cost one GCM setup and one
 * stream chunk per 4 KiB, which made a 2 MB state several times slower to seal and unseal than
 * 1 MiB frames (`npm run bench`, sealing table). A blob is held whole in memory anyway, so the
 * frame only bounds how much the ESDK buffers before authenticating. The length is written in
 * each message header: blobs sealed with any other frame length still unseal.
 */
export const SEALING_FRAME_LENGTH = 1024 * 1024;
const CONTEXT_RUN = 'countersign:run';
const CONTEXT_PURPOSE = 'countersign:purpose';
/**
 * Set to `identity` on a blob whose body is not compressed; absent means brotli, as every blob
 * sealed before it. In the encryption context, so it is authenticated with the blob.
 */
const CONTEXT_ENCODING = 'countersign:encoding';
/** Bodies under this are always compressed; over it, a sample decides (see `isWorthCompressing`). */
const COMPRESSION_SAMPLE_BYTES = 16 * 1024;
const SEALING_KEY_PURPOSE = 'sealing-key';
const SEAL_PURPOSES: ReadonlySet<string> = new Set<SealPurpose>([
  'run-state',
  'approval-card',
  'task-token',
  'call-result',
]);

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/**
 * Envelope encryption of run state (`StateSealer`) with the AWS Encryption SDK, built so that
 * KMS is called per sealing key, not per blob:
 *
 * - a 256-bit sealing key is wrapped by the key-wrapping keyring (KMS deployed, a local AES
 *   key in local mode) under the context `{countersign:purpose: 'sealing-key'}`;
 * - each new blob (format 2, `sealed-blob-v2.ts`) is one `node:crypto` AES-256-GCM call under
 *   a key derived per blob from the sealing key, bound to the run, purpose and encoding, with a
 *   key commitment checked before decrypting: the ESDK's fixed cost per message was most of
 *   the cost of a small blob and its stream copies most of a large one;
 * - blobs of format 1 (an ESDK message under a raw AES keyring over the sealing key, context
 *   `{countersign:run, countersign:purpose}` checked here) still unseal;
 * - blob = `CSE` + version byte + uint32 length + wrapped sealing key + the format's body.
 *
 * Unwrapped keys are cached (bounded count and age), and a key this container unwrapped may
 * seal new blobs, so pausing a run (unseal one, seal two) costs at most one KMS call.
 *
 * @example
 * const sealer = new EnvelopeSealer({ keyWrapping: await new LocalKeyring(dir).keyWrapping() });
 * const sealed = await sealer.seal('run-state', runId, bytes);
 * const bytesAgain = await sealer.unseal('run-state', runId, sealed);
 */
export class EnvelopeSealer implements StateSealer {
  private readonly keyWrapping: KeyWrapping;
  private readonly callCounter: AwsCallCounter | undefined;
  private readonly clock: Clock;
  private readonly maxCachedKeys: number;
  private readonly cachedKeyLifetimeMs: number;
  private readonly maxBlobsPerSealingKey: number;
  private readonly sealingKeyLifetimeMs: number;
  private readonly frameLength: number;
  private readonly blobVersion: 1 | 2;
  private encryptionSdk: Promise<EncryptionSdk> | undefined;
  /** Unwrapped keys by id, least recently used first. */
  private readonly cache = new Map<string, SealingKey>();
  private readonly pendingUnwraps = new Map<string, Promise<SealingKey>>();
  private currentKey: SealingKey | undefined;
  private pendingGeneration: Promise<SealingKey> | undefined;

  public constructor(props: EnvelopeSealerProps) {
    this.keyWrapping = props.keyWrapping;
    this.callCounter = props.callCounter;
    this.clock = props.clock ?? systemClock;
    this.maxCachedKeys = requirePositiveInteger('maxCachedKeys', props.maxCachedKeys ?? 64);
    this.cachedKeyLifetimeMs = requirePositiveInteger(
      'cachedKeyLifetimeMs',
      props.cachedKeyLifetimeMs ?? 300_000,
    );
    this.maxBlobsPerSealingKey = requirePositiveInteger(
      'maxBlobsPerSealingKey',
      props.maxBlobsPerSealingKey ?? 1000,
    );
    this.sealingKeyLifetimeMs = requirePositiveInteger(
      'sealingKeyLifetimeMs',
      props.sealingKeyLifetimeMs ?? 300_000,
    );
    this.frameLength = requirePositiveInteger('frameLength', props.frameLength ?? SEALING_FRAME_LENGTH);
    this.blobVersion = props.blobVersion ?? BLOB_VERSION_2;
  }

  public async seal(purpose: SealPurpose, runId: string, plaintext: Uint8Array): Promise<Uint8Array> {
    assertSealTarget(purpose, runId);
    try {
      const sealingKey = await this.acquireSealingKey();
      const compressing = isWorthCompressing(plaintext);
      const body = compressing
        ? await compress(plaintext, {
            params: {
              [zlibConstants.BROTLI_PARAM_QUALITY]: 5,
              [zlibConstants.BROTLI_PARAM_SIZE_HINT]: plaintext.byteLength,
            },
          })
        : plaintext;
      if (this.blobVersion === BLOB_VERSION_2) {
        return sealBlobV2(
          sealingKey.keyBytes,
          sealingKey.wrapping,
          sealingKey.wrapped,
          { runId, purpose, encoding: compressing ? 'brotli' : 'identity' },
          body,
          MAX_PLAINTEXT_BYTES,
        );
      }
      const sdk = await this.loadEncryptionSdk();
      const { result } = await sdk.client.encrypt(keyringOf(sdk, sealingKey), body, {
        suiteId: SUITE,
        encryptionContext: {
          [CONTEXT_RUN]: runId,
          [CONTEXT_PURPOSE]: purpose,
          ...(compressing ? {} : { [CONTEXT_ENCODING]: 'identity' }),
        },
        frameLength: this.frameLength,
      });
      return frameBlob(sealingKey.wrapped, result);
    } catch (error) {
      throw new CountersignError('internal', 'The run state could not be sealed.', {
        expose: false,
        cause: error,
      });
    }
  }

  public async unseal(purpose: SealPurpose, runId: string, sealed: Uint8Array): Promise<Uint8Array> {
    assertSealTarget(purpose, runId);
    if (!(sealed instanceof Uint8Array) || sealed.byteLength < HEADER_BYTES)
      throw rejected('it is truncated');
    if (BLOB_MAGIC.some((byte, index) => sealed[index] !== byte)) throw rejected('it has an unknown format');
    // The version byte picks one parser; a blob relabelled to the other version fails there
    // (and the version is authenticated in both: the ESDK header, the v2 derivation and AAD).
    if (sealed[BLOB_MAGIC.length] === BLOB_VERSION_2) return this.unsealVersion2(purpose, runId, sealed);
    if (sealed[BLOB_MAGIC.length] !== BLOB_VERSION_1) throw rejected('it has an unknown version');
    const { wrappedKey, message } = parseBlobVersion1(sealed);
    const sealingKey = await this.sealingKeyFor(1, wrappedKey);
    const sdk = await this.loadEncryptionSdk();
    let decrypted: Awaited<ReturnType<EncryptionSdk['client']['decrypt']>>;
    try {
      decrypted = await sdk.client.decrypt(keyringOf(sdk, sealingKey), message, {
        maxBodySize: MAX_PLAINTEXT_BYTES,
      });
    } catch {
      throw rejected('it failed authentication');
    }
    const context = decrypted.messageHeader.encryptionContext;
    if (decrypted.messageHeader.suiteId !== SUITE) throw rejected('it uses an unexpected algorithm');
    if (context[CONTEXT_RUN] !== runId) throw rejected('it was sealed for another run');
    if (context[CONTEXT_PURPOSE] !== purpose) throw rejected('it was sealed for another purpose');
    const encoding = context[CONTEXT_ENCODING];
    if (encoding === 'identity') return new Uint8Array(decrypted.plaintext);
    if (encoding !== undefined) throw rejected('it has an unknown encoding');
    return decompressBody(decrypted.plaintext);
  }

  private async unsealVersion2(purpose: SealPurpose, runId: string, sealed: Uint8Array): Promise<Uint8Array> {
    // The context is checked before the key is unwrapped: a copied blob costs no KMS call.
    const parsed = parseBlobV2(sealed, { runId, purpose }, MAX_PLAINTEXT_BYTES);
    if ('refused' in parsed) throw rejected(VERSION_2_REFUSALS[parsed.refused]);
    const sealingKey = await this.sealingKeyFor(parsed.keyWrapping, parsed.wrappedKey);
    const opened = openBlobV2(sealingKey.keyBytes, parsed);
    if ('refused' in opened) throw rejected(VERSION_2_REFUSALS[opened.refused]);
    return parsed.encoding === 'identity' ? opened.body : decompressBody(opened.body);
  }

  /** The current sealing key if it may still seal, else a new one (one generation at a time). */
  private async acquireSealingKey(): Promise<SealingKey> {
    for (;;) {
      const current = this.currentKey;
      // A format 1 blob can only carry a key the Encryption SDK wrapped.
      if (
        current &&
        this.maySeal(current) &&
        (this.blobVersion === BLOB_VERSION_2 || current.wrapping === 1)
      ) {
        // Count before any await, so concurrent seals cannot overrun the bound.
        current.blobsSealed += 1;
        return current;
      }
      if (!this.pendingGeneration) {
        this.pendingGeneration = this.generateSealingKey().finally(() => {
          this.pendingGeneration = undefined;
        });
      }
      await this.pendingGeneration;
    }
  }

  private async generateSealingKey(): Promise<SealingKey> {
    if (this.keyWrapping.kind === 'local') this.callCounter?.record('KMS', 'GenerateDataKey');
    let sealingKey: SealingKey;
    if (this.blobVersion === BLOB_VERSION_2) {
      const { keyBytes, wrapped } = await this.keyWrapping.generateKey();
      sealingKey = createSealingKey(2, new Uint8Array(wrapped), new Uint8Array(keyBytes), this.nowMs());
    } else {
      const keyBytes = new Uint8Array(randomBytes(SEALING_KEY_BYTES));
      const sdk = await this.loadEncryptionSdk();
      const { result: wrapped } = await sdk.client.encrypt(await this.keyWrapping.legacyKeyring(), keyBytes, {
        suiteId: SUITE,
        encryptionContext: { [CONTEXT_PURPOSE]: SEALING_KEY_PURPOSE },
      });
      sealingKey = createSealingKey(1, new Uint8Array(wrapped), keyBytes, this.nowMs());
    }
    this.remember(sealingKey);
    this.currentKey = sealingKey;
    return sealingKey;
  }

  /** The unwrapped key for a blob: from memory, or from one unwrap shared by concurrent callers. */
  private async sealingKeyFor(wrapping: SealingKeyWrapping, wrappedKey: Uint8Array): Promise<SealingKey> {
    const id = sealingKeyId(wrapping, wrappedKey);
    // The current key may have left the bounded cache while still sealing: keep it readable.
    const current = this.currentKey;
    if (current?.id === id && this.nowMs() - current.obtainedAt < this.cachedKeyLifetimeMs) return current;
    const cached = this.cache.get(id);
    if (cached && this.nowMs() - cached.obtainedAt < this.cachedKeyLifetimeMs) {
      this.cache.delete(id);
      this.cache.set(id, cached);
      return cached;
    }
    if (cached) this.cache.delete(id);
    let pending = this.pendingUnwraps.get(id);
    if (!pending) {
      pending = this.unwrapSealingKey(wrapping, wrappedKey).finally(() => this.pendingUnwraps.delete(id));
      this.pendingUnwraps.set(id, pending);
    }
    return pending;
  }

  private async unwrapSealingKey(wrapping: SealingKeyWrapping, wrappedKey: Uint8Array): Promise<SealingKey> {
    if (this.keyWrapping.kind === 'local') this.callCounter?.record('KMS', 'Decrypt');
    let keyBytes: Uint8Array;
    try {
      keyBytes =
        wrapping === 2
          ? await this.keyWrapping.unwrapKey(wrappedKey)
          : await this.unwrapLegacySealingKey(await this.keyWrapping.legacyKeyring(), wrappedKey);
    } catch {
      throw rejected('its key could not be unwrapped');
    }
    if (keyBytes.byteLength !== SEALING_KEY_BYTES) throw rejected('its key is not a sealing key');
    const sealingKey = createSealingKey(wrapping, wrappedKey, new Uint8Array(keyBytes), this.nowMs());
    this.remember(sealingKey);
    // A pause unseals the run state and then seals two blobs: reusing this key makes that one call.
    if (!this.currentKey || !this.maySeal(this.currentKey)) this.currentKey = sealingKey;
    return sealingKey;
  }

  /** A format 1 sealing key: an Encryption SDK message under the key-wrapping keyring. */
  private async unwrapLegacySealingKey(keyring: KeyringNode, wrappedKey: Uint8Array): Promise<Uint8Array> {
    const sdk = await this.loadEncryptionSdk();
    const unwrapped = await sdk.client.decrypt(keyring, wrappedKey, { maxBodySize: SEALING_KEY_BYTES });
    if (unwrapped.messageHeader.encryptionContext[CONTEXT_PURPOSE] !== SEALING_KEY_PURPOSE) {
      throw new Error('not a sealing key');
    }
    return new Uint8Array(unwrapped.plaintext);
  }

  /**
   * The Encryption SDK, loaded on the first format 1 blob or key: format 2 never needs it, and
   * its import was about a sixth of an unsealing handler's init (`npm run bench`).
   */
  private loadEncryptionSdk(): Promise<EncryptionSdk> {
    this.encryptionSdk ??= import('@aws-crypto/client-node').then((sdk) => ({
      client: sdk.buildClient({
        commitmentPolicy: sdk.CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT,
        // One wrapping key per message: refuse messages that would make us try many.
        maxEncryptedDataKeys: 1,
      }),
      createRawAesKeyring: (keyName: string, keyBytes: Uint8Array) =>
        new sdk.RawAesKeyringNode({
          keyNamespace: 'countersign',
          keyName,
          unencryptedMasterKey: keyBytes,
          wrappingSuite: sdk.RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
        }),
    }));
    return this.encryptionSdk;
  }

  private remember(sealingKey: SealingKey): void {
    this.cache.delete(sealingKey.id);
    this.cache.set(sealingKey.id, sealingKey);
    for (const id of this.cache.keys()) {
      if (this.cache.size <= this.maxCachedKeys) break;
      this.cache.delete(id);
    }
  }

  private maySeal(sealingKey: SealingKey): boolean {
    return (
      sealingKey.blobsSealed < this.maxBlobsPerSealingKey &&
      this.nowMs() - sealingKey.obtainedAt < this.sealingKeyLifetimeMs
    );
  }

  private nowMs(): number {
    return this.clock.now().getTime();
  }
}

/**
 * Whether brotli will shrink the body: run state (JSON) compresses several times over, but an
 * incompressible state (already compressed or random bytes) would pay brotli's full cost,
 * several times the encryption itself at 2 MB, for nothing. A fast pass over a sample decides.
 */
function isWorthCompressing(plaintext: Uint8Array): boolean {
  if (plaintext.byteLength <= COMPRESSION_SAMPLE_BYTES * 2) return true;
  const sample = plaintext.subarray(0, COMPRESSION_SAMPLE_BYTES);
  // Quality 0, brotli's fastest: on incompressible bytes a quarter of quality 1's time (a fifth
  // of raw AES-GCM's at 2 MB, `npm run bench`), and run state (JSON) still shrinks by two thirds.
  const compressed = brotliCompressSync(sample, {
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: 0,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: sample.byteLength,
    },
  });
  return compressed.byteLength < sample.byteLength * 0.9;
}

const VERSION_2_REFUSALS: Record<BlobRefusalV2, string> = {
  truncated: 'it is truncated',
  malformed: 'it has an unknown format',
  'another-run': 'it was sealed for another run',
  'another-purpose': 'it was sealed for another purpose',
  'unknown-encoding': 'it has an unknown encoding',
  'wrong-commitment': 'its key commitment does not match',
  'failed-authentication': 'it failed authentication',
};

async function decompressBody(body: Uint8Array): Promise<Uint8Array> {
  try {
    const plaintext = await decompress(body, { maxOutputLength: MAX_PLAINTEXT_BYTES });
    return new Uint8Array(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength);
  } catch {
    throw rejected('it could not be decompressed');
  }
}

interface EncryptionSdk {
  readonly client: ReturnType<typeof import('@aws-crypto/client-node').buildClient>;
  createRawAesKeyring(keyName: string, keyBytes: Uint8Array): RawAesKeyringNode;
}

function createSealingKey(
  wrapping: SealingKeyWrapping,
  wrapped: Uint8Array,
  keyBytes: Uint8Array,
  obtainedAt: number,
): SealingKey {
  return { id: sealingKeyId(wrapping, wrapped), wrapping, wrapped, keyBytes, obtainedAt, blobsSealed: 0 };
}

/**
 * Format 1 blobs name their keyring `sealing-key/<sha256 of the wrapped key>`: kept so, for the
 * Encryption SDK-wrapped keys they carry.
 */
function sealingKeyId(wrapping: SealingKeyWrapping, wrapped: Uint8Array): string {
  return wrapping === 1 ? sha256Hex(wrapped) : `direct/${sha256Hex(wrapped)}`;
}

function keyringOf(sdk: EncryptionSdk, sealingKey: SealingKey): RawAesKeyringNode {
  // A copy: the keyring takes ownership of (and may zero) the bytes it is given.
  sealingKey.keyring ??= sdk.createRawAesKeyring(
    `sealing-key/${sealingKey.id}`,
    Uint8Array.from(sealingKey.keyBytes),
  );
  return sealingKey.keyring;
}

function frameBlob(wrappedKey: Uint8Array, message: Uint8Array): Uint8Array {
  const blob = new Uint8Array(HEADER_BYTES + wrappedKey.byteLength + message.byteLength);
  blob.set(BLOB_MAGIC, 0);
  blob[BLOB_MAGIC.length] = BLOB_VERSION_1;
  new DataView(blob.buffer).setUint32(BLOB_MAGIC.length + 1, wrappedKey.byteLength);
  blob.set(wrappedKey, HEADER_BYTES);
  blob.set(message, HEADER_BYTES + wrappedKey.byteLength);
  return blob;
}

function parseBlobVersion1(sealed: Uint8Array): { wrappedKey: Uint8Array; message: Uint8Array } {
  const wrappedLength = new DataView(sealed.buffer, sealed.byteOffset, sealed.byteLength).getUint32(
    BLOB_MAGIC.length + 1,
  );
  if (wrappedLength === 0 || wrappedLength > MAX_WRAPPED_KEY_BYTES)
    throw rejected('it has an unknown format');
  if (sealed.byteLength <= HEADER_BYTES + wrappedLength) throw rejected('it is truncated');
  return {
    wrappedKey: sealed.slice(HEADER_BYTES, HEADER_BYTES + wrappedLength),
    message: sealed.subarray(HEADER_BYTES + wrappedLength),
  };
}

function assertSealTarget(purpose: SealPurpose, runId: string): void {
  if (!SEAL_PURPOSES.has(purpose) || typeof runId !== 'string' || runId.length === 0) {
    throw new CountersignError('internal', 'A seal was asked for an unknown purpose or an empty run.', {
      expose: false,
    });
  }
}

function rejected(reason: string): CountersignError {
  return new CountersignError('sealed-state-rejected', `The sealed run state was refused: ${reason}.`);
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function requirePositiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new CountersignError(
      'configuration',
      `EnvelopeSealer: ${name} must be a positive integer, got ${value}.`,
    );
  }
  return value;
}
