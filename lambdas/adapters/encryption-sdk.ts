import type { EncryptionContext, KeyringNode, NodeDecryptionMaterial } from '@aws-crypto/client-node';

/** The AWS Encryption SDK module, as `import('@aws-crypto/client-node')` gives it. */
export type EncryptionSdkModule = typeof import('@aws-crypto/client-node');
type EncryptionSdkClient = ReturnType<EncryptionSdkModule['buildClient']>;
/** The header of a message, as the SDK's encrypt and decrypt return it. */
export type MessageHeader = Awaited<ReturnType<EncryptionSdkClient['decrypt']>>['messageHeader'];

/** The Encryption SDK, loaded, with the one client every sealed message goes through. */
export interface EncryptionSdk {
  readonly module: EncryptionSdkModule;
  readonly client: EncryptionSdkClient;
  /** A keyring that picks the keyring for a message from its encryption context, on decrypt only. */
  createContextKeyring(resolve: (context: EncryptionContext) => Promise<KeyringNode>): KeyringNode;
}

/**
 * `ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY`: key commitment, no ECDSA signature. A
 * signature would prove nothing here, since whoever can unseal a blob holds the key that seals
 * its siblings, and it costs about 4 ms per seal and 9 ms per unseal (README, "Benchmark").
 */
export const MESSAGE_SUITE = 0x0478;
/** Message format version 2 (the committing suites' header) and its framed content type. */
const MESSAGE_FORMAT_VERSION = 2;
const FRAMED_CONTENT = 2;
/** The suite's GCM IV and tag, in bytes, as each frame and the header authentication carry them. */
const IV_BYTES = 12;
const TAG_BYTES = 16;

let loading: Promise<EncryptionSdk> | undefined;

/**
 * Loads the Encryption SDK on first use: it ships beside the bundles (lib/side-modules.ts),
 * and a handler that never seals or unseals never loads it. Only this dynamic import may
 * name the SDK at run time: esbuild would hoist a static import to the bundle's top.
 */
export function loadEncryptionSdk(): Promise<EncryptionSdk> {
  loading ??= import('@aws-crypto/client-node').then(createEncryptionSdk, (error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

function createEncryptionSdk(module: EncryptionSdkModule): EncryptionSdk {
  /**
   * The SDK's extension point for a keyring (no cryptography here): the blob names its sealing
   * key in its encryption context, which only the message header holds.
   */
  class ContextKeyring extends module.KeyringNode {
    private readonly resolve: (context: EncryptionContext) => Promise<KeyringNode>;

    public constructor(resolve: (context: EncryptionContext) => Promise<KeyringNode>) {
      super();
      this.resolve = resolve;
    }

    public async _onEncrypt(): Promise<never> {
      throw new Error('A context keyring only decrypts.');
    }

    public async _onDecrypt(
      material: NodeDecryptionMaterial,
      encryptedDataKeys: Parameters<KeyringNode['onDecrypt']>[1],
    ): Promise<NodeDecryptionMaterial> {
      const keyring = await this.resolve(material.encryptionContext);
      return keyring.onDecrypt(material, encryptedDataKeys);
    }
  }
  return {
    module,
    client: module.buildClient({
      commitmentPolicy: module.CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT,
      // One wrapping key per message: refuse messages that would make a keyring try many.
      maxEncryptedDataKeys: 1,
    }),
    createContextKeyring: (resolve) => new ContextKeyring(resolve),
  };
}

/**
 * The byte length of a framed message of format version 2 holding `plaintextLength` bytes:
 * the header and its authentication tag, the regular frames, the final frame (the SDK's
 * message format). The SDK's decrypt stops at the final frame of an unsigned message and
 * ignores what follows, so the sealer compares this with the bytes it was given; undefined
 * for any other kind of message.
 *
 * @example
 * messageLength(decrypted.messageHeader, decrypted.plaintext.byteLength) === sealed.byteLength;
 */
export function messageLength(header: MessageHeader, plaintextLength: number): number | undefined {
  if (
    !('suiteData' in header) ||
    header.version !== MESSAGE_FORMAT_VERSION ||
    header.contentType !== FRAMED_CONTENT ||
    !Number.isInteger(header.frameLength) ||
    header.frameLength <= 0
  ) {
    return undefined;
  }
  const contextEntries = Object.entries(header.encryptionContext);
  const contextBytes =
    contextEntries.length === 0
      ? 0
      : 2 +
        contextEntries.reduce((total, [key, value]) => total + 4 + utf8Length(key) + utf8Length(value), 0);
  const dataKeyBytes = header.encryptedDataKeys.reduce(
    (total, dataKey) =>
      total +
      6 +
      utf8Length(dataKey.providerId) +
      (dataKey.rawInfo?.byteLength ?? utf8Length(dataKey.providerInfo)) +
      dataKey.encryptedDataKey.byteLength,
    0,
  );
  const headerBytes =
    1 +
    2 +
    header.messageId.byteLength +
    2 +
    contextBytes +
    2 +
    dataKeyBytes +
    1 +
    4 +
    header.suiteData.byteLength;
  const frameLength = header.frameLength;
  const regularFrames = Math.floor(plaintextLength / frameLength);
  const finalFrameContent = plaintextLength % frameLength;
  return (
    headerBytes +
    TAG_BYTES +
    regularFrames * (4 + IV_BYTES + frameLength + TAG_BYTES) +
    (4 + 4 + IV_BYTES + 4 + finalFrameContent + TAG_BYTES)
  );
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
