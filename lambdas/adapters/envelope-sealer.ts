import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, brotliDecompress, constants as zlibConstants } from 'node:zlib';
import type { EncryptionContext } from '@aws-crypto/client-node';
import { CountersignError } from '../core/errors.js';
import type { SealPurpose, StateSealer } from '../core/ports.js';
import type { AwsCallCounter } from './aws-call-counter.js';
import { type EncryptionSdk, loadEncryptionSdk, MESSAGE_SUITE, messageLength } from './encryption-sdk.js';
import { type KeyWrapping, rejected, SealingKeys } from './sealing-keys.js';

export { createKmsKeyWrapping, type KmsKeyWrappingProps } from './kms-key-wrapping.js';
export type { KeyWrapping } from './sealing-keys.js';

export interface EnvelopeSealerProps {
  readonly keyWrapping: KeyWrapping;
  /**
   * Where the local keyring's wraps and unwraps are recorded as `KMS:GenerateDataKey` and
   * `KMS:Decrypt`. With the KMS keyring, attach the counter to the KMS client instead
   * (`createKmsKeyWrapping({ callCounter })`): the sealer records nothing itself then.
   * @default - nothing is recorded
   */
  readonly callCounter?: AwsCallCounter;
  /** Unwrapped sealing keys kept in memory (the caching materials manager's cache). @default 64 */
  readonly maxCachedKeys?: number;
  /** How long an unwrapped sealing key stays in memory. @default 300000 (5 minutes) */
  readonly cachedKeyLifetimeMs?: number;
  /** Blobs one sealing key may seal before a new one is generated. @default 1000 */
  readonly maxBlobsPerSealingKey?: number;
  /** How long after this container obtained it a sealing key may seal new blobs. @default 300000 */
  readonly sealingKeyLifetimeMs?: number;
  /** Body frame length of the messages sealed (each message's header names its own). @default SEALING_FRAME_LENGTH */
  readonly frameLength?: number;
}

/**
 * Body frame length of each blob. The SDK's default 4 KiB frames cost one GCM setup and one
 * stream chunk per 4 KiB, which made a 2 MB state several times slower to seal and unseal than
 * 1 MiB frames (`npm run bench`, sealing table). A blob is held whole in memory anyway, so the
 * frame only bounds how much the SDK buffers before authenticating.
 */
export const SEALING_FRAME_LENGTH = 1024 * 1024;
/** Bounds what a forged blob can make this process allocate (a frame, a decompressed body). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const CONTEXT_RUN = 'countersign:run';
const CONTEXT_PURPOSE = 'countersign:purpose';
/** `brotli` or `identity` (a body that would not shrink): authenticated with the blob. */
const CONTEXT_ENCODING = 'countersign:encoding';
/** The wrapped sealing key (base64), which the blob's data key is wrapped under. */
const CONTEXT_SEALING_KEY = 'countersign:sealing-key';
const CONTEXT_KEYS = [CONTEXT_ENCODING, CONTEXT_PURPOSE, CONTEXT_RUN, CONTEXT_SEALING_KEY].join();
/** Bodies under this are always compressed; over it, a sample decides (see `isWorthCompressing`). */
const COMPRESSION_SAMPLE_BYTES = 16 * 1024;
/** What the core names as purposes (`SealPurpose`); a new one needs no change here. */
const PURPOSE_PATTERN = /^[a-z][a-z-]{0,62}$/;

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/**
 * Envelope encryption of run state (`StateSealer`) with the AWS Encryption SDK: each blob is
 * one SDK message and nothing else (committing suite `AES_256_GCM_HKDF_SHA512_COMMIT_KEY`,
 * policy `REQUIRE_ENCRYPT_REQUIRE_DECRYPT`), whose encryption context names the run, the
 * purpose, the body's encoding and the wrapped sealing key its data key is wrapped under
 * (`sealing-keys.ts`: one KMS call per sealing key, not per blob).
 *
 * `unseal` compares the context with the run and purpose it was asked for before any key is
 * unwrapped (a copied blob costs no KMS call) and again once the SDK has authenticated it,
 * and refuses a byte after the message's end, which the SDK's decrypt would ignore.
 *
 * @example
 * const sealer = new EnvelopeSealer({ keyWrapping: await new LocalKeyring(dir).keyWrapping() });
 * const sealed = await sealer.seal('run-state', runId, bytes);
 * const bytesAgain = await sealer.unseal('run-state', runId, sealed);
 */
export class EnvelopeSealer implements StateSealer {
  private readonly props: EnvelopeSealerProps;
  private readonly frameLength: number;
  private ready: Promise<{ sdk: EncryptionSdk; keys: SealingKeys }> | undefined;

  public constructor(props: EnvelopeSealerProps) {
    for (const name of [
      'maxCachedKeys',
      'cachedKeyLifetimeMs',
      'maxBlobsPerSealingKey',
      'sealingKeyLifetimeMs',
      'frameLength',
    ] as const) {
      const value = props[name];
      if (value !== undefined && (!Number.isInteger(value) || value <= 0)) {
        throw new CountersignError(
          'configuration',
          `EnvelopeSealer: ${name} must be a positive integer, got ${value}.`,
        );
      }
    }
    this.props = props;
    this.frameLength = props.frameLength ?? SEALING_FRAME_LENGTH;
  }

  public async seal(purpose: SealPurpose, runId: string, plaintext: Uint8Array): Promise<Uint8Array> {
    assertSealTarget(purpose, runId);
    try {
      const { sdk, keys } = await this.load();
      const sealingKey = await keys.forSealing();
      const compressing = isWorthCompressing(plaintext);
      const body = compressing
        ? await compress(plaintext, {
            params: {
              [zlibConstants.BROTLI_PARAM_QUALITY]: 5,
              [zlibConstants.BROTLI_PARAM_SIZE_HINT]: plaintext.byteLength,
            },
          })
        : plaintext;
      if (body.byteLength > MAX_BODY_BYTES) throw new Error('The body is over the sealing bound.');
      const { result, messageHeader } = await sdk.client.encrypt(sealingKey.keyring, body, {
        suiteId: MESSAGE_SUITE,
        encryptionContext: {
          [CONTEXT_RUN]: runId,
          [CONTEXT_PURPOSE]: purpose,
          [CONTEXT_ENCODING]: compressing ? 'brotli' : 'identity',
          [CONTEXT_SEALING_KEY]: sealingKey.wrapped,
        },
        frameLength: this.frameLength,
      });
      // What unseal checks, checked here too: a change in the SDK's layout fails the first seal.
      if (messageLength(messageHeader, body.byteLength) !== result.byteLength) {
        throw new Error('The Encryption SDK wrote a message of an unexpected length.');
      }
      return new Uint8Array(result.buffer, result.byteOffset, result.byteLength);
    } catch (error) {
      throw new CountersignError('internal', 'The run state could not be sealed.', {
        expose: false,
        cause: error,
      });
    }
  }

  public async unseal(purpose: SealPurpose, runId: string, sealed: Uint8Array): Promise<Uint8Array> {
    assertSealTarget(purpose, runId);
    if (!(sealed instanceof Uint8Array) || sealed.byteLength === 0) throw rejected('it is empty');
    const { sdk, keys } = await this.load();
    // The SDK reports a keyring's error as its own; the refusal is kept here to say why.
    let refusal: CountersignError | undefined;
    const keyring = sdk.createContextKeyring(async (context) => {
      try {
        const { wrappedKey } = readContext(context, runId, purpose);
        return await keys.forUnsealing(wrappedKey);
      } catch (error) {
        refusal = error instanceof CountersignError ? error : rejected('its key could not be unwrapped');
        throw refusal;
      }
    });
    let decrypted: Awaited<ReturnType<EncryptionSdk['client']['decrypt']>>;
    try {
      decrypted = await sdk.client.decrypt(keyring, sealed, { maxBodySize: MAX_BODY_BYTES });
    } catch {
      throw refusal ?? rejected('it failed authentication');
    }
    const { messageHeader, plaintext } = decrypted;
    if (messageHeader.suiteId !== MESSAGE_SUITE) throw rejected('it uses an unexpected algorithm');
    const { encoding } = readContext(messageHeader.encryptionContext, runId, purpose);
    if (messageLength(messageHeader, plaintext.byteLength) !== sealed.byteLength) {
      throw rejected('it does not end where its message ends');
    }
    return encoding === 'identity'
      ? new Uint8Array(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength)
      : decompressBody(plaintext);
  }

  /** The SDK and this container's sealing keys, on the first seal or unseal. */
  private load(): Promise<{ sdk: EncryptionSdk; keys: SealingKeys }> {
    this.ready ??= loadEncryptionSdk().then(
      (sdk) => ({
        sdk,
        keys: new SealingKeys(sdk, {
          keyWrapping: this.props.keyWrapping,
          callCounter: this.props.callCounter,
          maxCachedKeys: this.props.maxCachedKeys ?? 64,
          cachedKeyLifetimeMs: this.props.cachedKeyLifetimeMs ?? 300_000,
          maxBlobsPerSealingKey: this.props.maxBlobsPerSealingKey ?? 1000,
          sealingKeyLifetimeMs: this.props.sealingKeyLifetimeMs ?? 300_000,
        }),
      }),
      (error: unknown) => {
        this.ready = undefined;
        throw new CountersignError('internal', 'The Encryption SDK could not be loaded.', {
          expose: false,
          cause: error,
        });
      },
    );
    return this.ready;
  }
}

/**
 * The blob's context, compared with what the caller expects: exactly the four keys, this run,
 * this purpose, a known encoding. Called on the header before decrypting (unauthenticated, so
 * only to refuse early) and after (authenticated).
 */
function readContext(
  context: EncryptionContext,
  runId: string,
  purpose: SealPurpose,
): { encoding: 'brotli' | 'identity'; wrappedKey: string } {
  if (Object.keys(context).sort().join() !== CONTEXT_KEYS) throw rejected('it has an unknown format');
  if (context[CONTEXT_RUN] !== runId) throw rejected('it was sealed for another run');
  if (context[CONTEXT_PURPOSE] !== purpose) throw rejected('it was sealed for another purpose');
  const encoding = context[CONTEXT_ENCODING];
  if (encoding !== 'brotli' && encoding !== 'identity') throw rejected('it has an unknown encoding');
  return { encoding, wrappedKey: context[CONTEXT_SEALING_KEY] ?? '' };
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

async function decompressBody(body: Uint8Array): Promise<Uint8Array> {
  try {
    const plaintext = await decompress(body, { maxOutputLength: MAX_BODY_BYTES });
    return new Uint8Array(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength);
  } catch {
    throw rejected('it could not be decompressed');
  }
}

function assertSealTarget(purpose: SealPurpose, runId: string): void {
  if (
    typeof purpose !== 'string' ||
    !PURPOSE_PATTERN.test(purpose) ||
    typeof runId !== 'string' ||
    runId.length === 0
  ) {
    throw new CountersignError('internal', 'A seal was asked for an unknown purpose or an empty run.', {
      expose: false,
    });
  }
}
