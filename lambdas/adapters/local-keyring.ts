import { randomBytes } from 'node:crypto';
import { CountersignError } from '../core/errors.js';
import { readOrCreateKeyFile } from './owner-only-key-file.js';
import type { KeyWrapping } from './sealing-keys.js';

const MASTER_KEY_FILE = 'master-key.bin';
const MASTER_KEY_BYTES = 32;

/**
 * The local stand-in for the KMS key: a 256-bit master key in a file (mode 0600) that is
 * created on first use and loaded afterwards, so a restart can still unseal waiting runs.
 *
 * @example
 * const keyWrapping = await new LocalKeyring('.countersign/keys').keyWrapping();
 * const sealer = new EnvelopeSealer({ keyWrapping, callCounter });
 */
export class LocalKeyring {
  private readonly directory: string;
  private loaded: Promise<KeyWrapping> | undefined;

  public constructor(directory: string) {
    this.directory = directory;
  }

  /** The key wrapping over the local master key (created if the file is missing). */
  public keyWrapping(): Promise<KeyWrapping> {
    this.loaded ??= this.loadOrCreate().catch((error: unknown) => {
      this.loaded = undefined;
      throw error;
    });
    return this.loaded;
  }

  private async loadOrCreate(): Promise<KeyWrapping> {
    return createLocalKeyWrapping(await this.readOrCreateMasterKey());
  }

  private async readOrCreateMasterKey(): Promise<Uint8Array> {
    const masterKey = new Uint8Array(
      await readOrCreateKeyFile(this.directory, MASTER_KEY_FILE, () => randomBytes(MASTER_KEY_BYTES)),
    );
    if (masterKey.byteLength !== MASTER_KEY_BYTES) {
      throw new CountersignError(
        'configuration',
        `The local master key file ${MASTER_KEY_FILE} must hold ${MASTER_KEY_BYTES} bytes; it holds ${masterKey.byteLength}. Restore it, or delete it to start over (waiting runs are then lost).`,
      );
    }
    return masterKey;
  }
}

/**
 * The local key wrapping: the Encryption SDK's raw AES keyring over a master key, through the
 * same SDK path as the KMS keyring deployed.
 *
 * @example
 * const sealer = new EnvelopeSealer({ keyWrapping: createLocalKeyWrapping(randomBytes(32)) });
 */
export function createLocalKeyWrapping(masterKey: Uint8Array): KeyWrapping {
  return {
    kind: 'local',
    createKeyring: ({ RawAesKeyringNode, RawAesWrappingSuiteIdentifier }) =>
      new RawAesKeyringNode({
        keyNamespace: 'countersign-local',
        keyName: 'master-key',
        // A copy: the keyring keeps (and may zero) the bytes it is given.
        unencryptedMasterKey: Uint8Array.from(masterKey),
        wrappingSuite: RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
      }),
  };
}
