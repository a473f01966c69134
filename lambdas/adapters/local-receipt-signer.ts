import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
} from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CountersignError } from '../core/errors.js';
import type { ReceiptSigner } from '../core/receipts/receipt-ports.js';
import { readOrCreateKeyFile } from './owner-only-key-file.js';

/** The private key (PKCS #8 PEM, mode 0600) and its public half (SPKI PEM) in the keys directory. */
export const LOCAL_RECEIPT_KEY_FILE = 'receipt-signing-key.pem';
export const LOCAL_RECEIPT_PUBLIC_KEY_FILE = 'receipt-public-key.pem';

interface LoadedKey {
  privateKey: KeyObject;
  keyId: string;
}

/**
 * The local stand-in for the receipt signing KMS key: a P-256 key created on first start in the
 * data directory's keys folder (mode 0600) and loaded afterwards, so receipts signed before a
 * restart still verify. Its public half is written beside it for `countersign verify --public-key`.
 * The signature is what KMS `Sign` with `ECDSA_SHA_256` returns: ECDSA over SHA-256, DER-encoded.
 *
 * @example
 * const signer = new LocalReceiptSigner('.countersign/keys');
 * const signature = await signer.sign(message);
 */
export class LocalReceiptSigner implements ReceiptSigner {
  private loaded: Promise<LoadedKey> | undefined;

  public constructor(private readonly directory: string) {}

  /**
   * A signer on a key held in memory only (tests, an in-memory local runtime): nothing is written.
   *
   * @example
   * const signer = LocalReceiptSigner.withKey(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey);
   */
  public static withKey(privateKey: KeyObject): LocalReceiptSigner {
    const signer = new LocalReceiptSigner('');
    signer.loaded = Promise.resolve({ privateKey, keyId: localReceiptKeyId(createPublicKey(privateKey)) });
    return signer;
  }

  public async signingKeyId(): Promise<string> {
    return (await this.load()).keyId;
  }

  public async sign(message: Uint8Array): Promise<Uint8Array> {
    const { privateKey } = await this.load();
    return new Uint8Array(sign('sha256', message, { key: privateKey, dsaEncoding: 'der' }));
  }

  /** Where the public key (SPKI PEM) is, once the key exists. */
  public async publicKeyPath(): Promise<string> {
    await this.load();
    return join(this.directory, LOCAL_RECEIPT_PUBLIC_KEY_FILE);
  }

  private load(): Promise<LoadedKey> {
    this.loaded ??= this.loadOrCreate().catch((error: unknown) => {
      this.loaded = undefined;
      throw error;
    });
    return this.loaded;
  }

  private async loadOrCreate(): Promise<LoadedKey> {
    const pem = await readOrCreateKeyFile(this.directory, LOCAL_RECEIPT_KEY_FILE, () =>
      generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({
        type: 'pkcs8',
        format: 'pem',
      }),
    );
    const privateKey = readPrivateKey(pem.toString('utf8'));
    const publicKey = createPublicKey(privateKey);
    await writeFile(
      join(this.directory, LOCAL_RECEIPT_PUBLIC_KEY_FILE),
      publicKey.export({ type: 'spki', format: 'pem' }),
      { mode: 0o644 },
    );
    return { privateKey, keyId: localReceiptKeyId(publicKey) };
  }
}

/**
 * The id a local key signs under: `local:sha256:` and the SHA-256 of its public key (SPKI DER),
 * so a receipt names which local key signed it without a registry of keys.
 *
 * @example
 * localReceiptKeyId(createPublicKey(pem)) // 'local:sha256:9f…'
 */
export function localReceiptKeyId(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return `local:sha256:${createHash('sha256').update(der).digest('hex')}`;
}

function readPrivateKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw unusableKey();
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw unusableKey();
  return key;
}

function unusableKey(): CountersignError {
  return new CountersignError(
    'configuration',
    `The local receipt key file ${LOCAL_RECEIPT_KEY_FILE} is not a P-256 private key. Restore it, or delete it to start over (receipts signed with it then no longer verify against a new key).`,
  );
}
