import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { KeyringNode, KMS } from '@aws-crypto/client-node';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient, type KMSClientConfig } from '@aws-sdk/client-kms';
import type { AwsCallCounter } from './aws-call-counter.js';
import { surfaceTransientFaults } from './aws-faults.js';

/** The length of a sealing key: AES-256. */
export const SEALING_KEY_BYTES = 32;
/** The encryption context of every directly wrapped sealing key (KMS checks it on Decrypt). */
const SEALING_KEY_CONTEXT: Readonly<Record<string, string>> = {
  'countersign:purpose': 'sealing-key',
};

/**
 * What wraps sealing keys. Keys of blob format 2 are wrapped *directly*: one KMS
 * GenerateDataKey / Decrypt (with the sealing-key encryption context), or locally one
 * AES-256-GCM call under the master key. Keys of format 1 blobs were wrapped by an Encryption
 * SDK keyring over the same KMS key (or local master key); `legacyKeyring` builds it on first
 * use only, so a container that never meets a format 1 blob never loads the Encryption SDK.
 *
 * `local` stands in for KMS in local mode: the sealer counts its wraps and unwraps as the KMS
 * calls they replace. `kms` calls KMS through an SDK client whose own middleware counts them.
 */
export interface KeyWrapping {
  readonly kind: 'kms' | 'local';
  /** A new sealing key and its wrapped form. */
  generateKey(): Promise<{ readonly keyBytes: Uint8Array; readonly wrapped: Uint8Array }>;
  /** Unwraps what `generateKey` wrapped; rejects anything else. */
  unwrapKey(wrapped: Uint8Array): Promise<Uint8Array>;
  /** The Encryption SDK keyring that wrapped format 1 sealing keys, built on first use. */
  legacyKeyring(): Promise<KeyringNode>;
}

export interface KmsKeyWrappingProps {
  /** The ARN of the KMS key that wraps sealing keys (a full key ARN: the ESDK filters on it). */
  readonly keyArn: string;
  /**
   * Configuration of the KMS client (region, endpoint, credentials).
   * @default - the SDK's defaults, region taken from the key ARN
   */
  readonly clientConfig?: KMSClientConfig;
  /**
   * Counts the KMS calls through the client's middleware.
   * @default - calls are not counted
   */
  readonly callCounter?: AwsCallCounter;
}

/**
 * The deployed key wrapping over one customer managed key. The KMS client is built on first
 * use and shared with the legacy keyring (the ESDK would otherwise build one per call).
 *
 * @example
 * const sealer = new EnvelopeSealer({ keyWrapping: createKmsKeyWrapping({ keyArn }) });
 */
export function createKmsKeyWrapping(props: KmsKeyWrappingProps): KeyWrapping {
  const region = props.keyArn.split(':')[3] || undefined;
  let client: KMSClient | undefined;
  const kmsClient = (): KMSClient => {
    if (!client) {
      client = surfaceTransientFaults(
        new KMSClient({ ...(region ? { region } : {}), ...props.clientConfig }),
      );
      props.callCounter?.attachTo(client);
    }
    return client;
  };
  let legacy: Promise<KeyringNode> | undefined;
  return {
    kind: 'kms',
    generateKey: async () => {
      const answer = await kmsClient().send(
        new GenerateDataKeyCommand({
          KeyId: props.keyArn,
          KeySpec: 'AES_256',
          EncryptionContext: { ...SEALING_KEY_CONTEXT },
        }),
      );
      if (answer.Plaintext?.byteLength !== SEALING_KEY_BYTES || !answer.CiphertextBlob?.byteLength) {
        throw new Error('KMS answered GenerateDataKey without a 256-bit key.');
      }
      return { keyBytes: answer.Plaintext, wrapped: answer.CiphertextBlob };
    },
    unwrapKey: async (wrapped) => {
      // KeyId pins the key: KMS refuses a ciphertext that another key (another account's) made.
      const answer = await kmsClient().send(
        new DecryptCommand({
          KeyId: props.keyArn,
          CiphertextBlob: wrapped,
          EncryptionContext: { ...SEALING_KEY_CONTEXT },
        }),
      );
      if (answer.Plaintext?.byteLength !== SEALING_KEY_BYTES) throw new Error('not a sealing key');
      return answer.Plaintext;
    },
    legacyKeyring: () => {
      legacy ??= import('@aws-crypto/client-node').then(({ getClient, KMS, KmsKeyringNode }) => {
        // The keyring calls the aggregated client's methods; one per region, counted as above.
        const createClient = getClient(KMS, { ...props.clientConfig });
        const clients = new Map<string, KMS>();
        const clientProvider = (clientRegion: string): KMS | false => {
          const known = clients.get(clientRegion);
          if (known) return known;
          const created = createClient(clientRegion);
          if (!created) return false;
          props.callCounter?.attachTo(created);
          clients.set(clientRegion, created);
          return created;
        };
        return new KmsKeyringNode({ generatorKeyId: props.keyArn, clientProvider });
      });
      return legacy;
    },
  };
}

const LOCAL_WRAP_LABEL = Buffer.from('countersign local sealing key', 'utf8');
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The local stand-in for KMS's wrapping: AES-256-GCM under the master key, `nonce ‖ ciphertext
 * ‖ tag`, the label as additional data. `legacyKeyring` is the raw AES keyring format 1 used.
 */
export function createLocalKeyWrapping(masterKey: Uint8Array): KeyWrapping {
  let legacy: Promise<KeyringNode> | undefined;
  return {
    kind: 'local',
    generateKey: async () => {
      const keyBytes = new Uint8Array(randomBytes(SEALING_KEY_BYTES));
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', masterKey, nonce);
      cipher.setAAD(LOCAL_WRAP_LABEL);
      const ciphertext = Buffer.concat([cipher.update(keyBytes), cipher.final()]);
      return { keyBytes, wrapped: new Uint8Array(Buffer.concat([nonce, ciphertext, cipher.getAuthTag()])) };
    },
    unwrapKey: async (wrapped) => {
      if (wrapped.byteLength !== NONCE_BYTES + SEALING_KEY_BYTES + TAG_BYTES)
        throw new Error('not a sealing key');
      const decipher = createDecipheriv('aes-256-gcm', masterKey, wrapped.subarray(0, NONCE_BYTES));
      decipher.setAAD(LOCAL_WRAP_LABEL);
      decipher.setAuthTag(wrapped.subarray(NONCE_BYTES + SEALING_KEY_BYTES));
      const keyBytes = Buffer.concat([
        decipher.update(wrapped.subarray(NONCE_BYTES, NONCE_BYTES + SEALING_KEY_BYTES)),
        decipher.final(),
      ]);
      return new Uint8Array(keyBytes);
    },
    legacyKeyring: () => {
      legacy ??= import('@aws-crypto/client-node').then(
        ({ RawAesKeyringNode, RawAesWrappingSuiteIdentifier }) =>
          new RawAesKeyringNode({
            keyNamespace: 'countersign-local',
            keyName: 'master-key',
            // A copy: the keyring takes ownership of the bytes, the direct wrapping keeps using them.
            unencryptedMasterKey: Uint8Array.from(masterKey),
            wrappingSuite: RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
          }),
      );
      return legacy;
    },
  };
}
