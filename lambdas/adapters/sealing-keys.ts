import { randomBytes } from 'node:crypto';
import type { KeyringNode, NodeCachingMaterialsManager, RawAesKeyringNode } from '@aws-crypto/client-node';
import { CountersignError } from '../core/errors.js';
import type { AwsCallCounter } from './aws-call-counter.js';
import {
  type EncryptionSdk,
  type EncryptionSdkModule,
  MESSAGE_SUITE,
  messageLength,
} from './encryption-sdk.js';

/**
 * What wraps sealing keys: the Encryption SDK keyring over the construct's KMS key
 * (`createKmsKeyWrapping`), or locally over a master key in a file (`LocalKeyring`). `local`
 * stands in for KMS: the sealer counts its wraps and unwraps as the KMS calls they replace;
 * `kms` is counted by its KMS client's middleware.
 */
export interface KeyWrapping {
  readonly kind: 'kms' | 'local';
  /** The keyring, built once the Encryption SDK has loaded. */
  createKeyring(sdk: EncryptionSdkModule): KeyringNode;
}

export interface SealingKeysOptions {
  readonly keyWrapping: KeyWrapping;
  readonly callCounter: AwsCallCounter | undefined;
  readonly maxCachedKeys: number;
  readonly cachedKeyLifetimeMs: number;
  readonly maxBlobsPerSealingKey: number;
  readonly sealingKeyLifetimeMs: number;
}

/** A sealing key this container holds: its wrapped form (named in each blob) and its keyring. */
export interface SealingKey {
  /** Base64 of the Encryption SDK message that wraps the key. */
  readonly wrapped: string;
  readonly keyring: RawAesKeyringNode;
  readonly obtainedAt: number;
  blobsSealed: number;
}

/** The length of a sealing key: AES-256. */
const SEALING_KEY_BYTES = 32;
/** The encryption context of every wrapped sealing key (KMS binds it to the data key it wraps). */
const SEALING_KEY_CONTEXT: Readonly<Record<string, string>> = { 'countersign:purpose': 'sealing-key' };
/** A wrapped key is a few hundred bytes; anything much larger is not one. */
const MAX_WRAPPED_KEY_CHARACTERS = 16 * 1024;

/**
 * The sealing keys of one container, two levels as in the AWS hierarchical keyring: a 256-bit
 * sealing key is an Encryption SDK message under the key-wrapping keyring (one KMS call to
 * generate or to unwrap), and each blob is an Encryption SDK message whose data key is wrapped
 * under the sealing key by a raw AES keyring. A key this container generated or unwrapped may
 * seal new blobs within its bounds, so pausing a run (unseal one, seal two) costs one KMS call.
 * Unwrapped keys are cached by the SDK's caching materials manager (count and age bounded);
 * concurrent unseals of one key share one unwrap.
 */
export class SealingKeys {
  private readonly sdk: EncryptionSdk;
  private readonly options: SealingKeysOptions;
  private readonly wrappingKeyring: KeyringNode;
  private readonly unwrapping: NodeCachingMaterialsManager;
  private readonly pendingUnwraps = new Map<string, Promise<SealingKey>>();
  private current: SealingKey | undefined;
  private pendingGeneration: Promise<SealingKey> | undefined;

  public constructor(sdk: EncryptionSdk, options: SealingKeysOptions) {
    this.sdk = sdk;
    this.options = options;
    const keyring = options.keyWrapping.createKeyring(sdk.module);
    this.wrappingKeyring =
      options.keyWrapping.kind === 'local' && options.callCounter
        ? createCountingKeyring(sdk.module, keyring, options.callCounter)
        : keyring;
    this.unwrapping = new sdk.module.NodeCachingMaterialsManager({
      backingMaterials: this.wrappingKeyring,
      cache: sdk.module.getLocalCryptographicMaterialsCache(options.maxCachedKeys),
      maxAge: options.cachedKeyLifetimeMs,
      partition: 'countersign-sealing-keys',
    });
  }

  /** The current sealing key if it may still seal, else a new one (one generation at a time). */
  public async forSealing(): Promise<SealingKey> {
    for (;;) {
      const current = this.current;
      if (current && this.maySeal(current)) {
        // Counted before any await, so concurrent seals cannot overrun the bound.
        current.blobsSealed += 1;
        return current;
      }
      this.pendingGeneration ??= this.generate().finally(() => {
        this.pendingGeneration = undefined;
      });
      await this.pendingGeneration;
    }
  }

  /**
   * The keyring of the sealing key a blob names: this container's current key, or an unwrap
   * (the caching materials manager answers a key it unwrapped within its lifetime). Throws
   * `sealed-state-rejected` when the key cannot be unwrapped.
   */
  public async forUnsealing(wrapped: string): Promise<RawAesKeyringNode> {
    const current = this.current;
    if (current?.wrapped === wrapped && Date.now() - current.obtainedAt < this.options.cachedKeyLifetimeMs) {
      return current.keyring;
    }
    let pending = this.pendingUnwraps.get(wrapped);
    if (!pending) {
      pending = this.unwrap(wrapped).finally(() => this.pendingUnwraps.delete(wrapped));
      this.pendingUnwraps.set(wrapped, pending);
    }
    return (await pending).keyring;
  }

  private async generate(): Promise<SealingKey> {
    const keyBytes = new Uint8Array(randomBytes(SEALING_KEY_BYTES));
    // The keyring itself, not the caching manager: every sealing key gets a data key of its own.
    const { result, messageHeader } = await this.sdk.client.encrypt(this.wrappingKeyring, keyBytes, {
      suiteId: MESSAGE_SUITE,
      encryptionContext: { ...SEALING_KEY_CONTEXT },
    });
    if (messageLength(messageHeader, SEALING_KEY_BYTES) !== result.byteLength) {
      throw new Error('The Encryption SDK wrote a sealing key message of an unexpected length.');
    }
    const sealingKey = this.createSealingKey(result.toString('base64'), keyBytes);
    this.current = sealingKey;
    return sealingKey;
  }

  private async unwrap(wrapped: string): Promise<SealingKey> {
    const message = Buffer.from(wrapped, 'base64');
    // Node's base64 decoder skips what is not base64: only the canonical spelling names a key.
    if (wrapped.length > MAX_WRAPPED_KEY_CHARACTERS || message.toString('base64') !== wrapped) {
      throw rejected('its key is not a wrapped sealing key');
    }
    let unwrapped: Awaited<ReturnType<EncryptionSdk['client']['decrypt']>>;
    try {
      unwrapped = await this.sdk.client.decrypt(this.unwrapping, message, { maxBodySize: SEALING_KEY_BYTES });
    } catch {
      throw rejected('its key could not be unwrapped');
    }
    const { messageHeader, plaintext } = unwrapped;
    const context = messageHeader.encryptionContext;
    if (
      messageHeader.suiteId !== MESSAGE_SUITE ||
      Object.keys(context).length !== 1 ||
      context['countersign:purpose'] !== SEALING_KEY_CONTEXT['countersign:purpose'] ||
      plaintext.byteLength !== SEALING_KEY_BYTES ||
      messageLength(messageHeader, plaintext.byteLength) !== message.byteLength
    ) {
      throw rejected('its key is not a sealing key');
    }
    const sealingKey = this.createSealingKey(wrapped, plaintext);
    // A pause unseals the run state and then seals two blobs: reusing this key makes that one call.
    if (!this.current || !this.maySeal(this.current)) this.current = sealingKey;
    return sealingKey;
  }

  private createSealingKey(wrapped: string, keyBytes: Uint8Array): SealingKey {
    const keyring = new this.sdk.module.RawAesKeyringNode({
      keyNamespace: 'countersign',
      keyName: 'sealing-key',
      // A copy: the keyring keeps (and may zero) the bytes it is given; ours are zeroed now.
      unencryptedMasterKey: Uint8Array.from(keyBytes),
      wrappingSuite: this.sdk.module.RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
    });
    keyBytes.fill(0);
    return { wrapped, keyring, obtainedAt: Date.now(), blobsSealed: 0 };
  }

  private maySeal(sealingKey: SealingKey): boolean {
    return (
      sealingKey.blobsSealed < this.options.maxBlobsPerSealingKey &&
      Date.now() - sealingKey.obtainedAt < this.options.sealingKeyLifetimeMs
    );
  }
}

/** The local keyring, counted as the KMS calls it stands in for (only when it runs: not on a cache hit). */
function createCountingKeyring(
  sdk: EncryptionSdkModule,
  keyring: KeyringNode,
  counter: AwsCallCounter,
): KeyringNode {
  class CountingKeyring extends sdk.KeyringNode {
    public async _onEncrypt(
      material: Parameters<KeyringNode['onEncrypt']>[0],
    ): ReturnType<KeyringNode['onEncrypt']> {
      counter.record('KMS', 'GenerateDataKey');
      return keyring.onEncrypt(material);
    }

    public async _onDecrypt(
      material: Parameters<KeyringNode['onDecrypt']>[0],
      encryptedDataKeys: Parameters<KeyringNode['onDecrypt']>[1],
    ): ReturnType<KeyringNode['onDecrypt']> {
      counter.record('KMS', 'Decrypt');
      return keyring.onDecrypt(material, encryptedDataKeys);
    }
  }
  return new CountingKeyring();
}

export function rejected(reason: string): CountersignError {
  return new CountersignError('sealed-state-rejected', `The sealed run state was refused: ${reason}.`);
}
