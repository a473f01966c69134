import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CountersignError } from '../core/errors.js';
import { enforcePrivateModes, PRIVATE_DIRECTORY_MODE, PRIVATE_FILE_MODE } from './private-file-modes.js';

/** Folder name of the local data directory, relative to the project root. Listed in `.gitignore`. */
export const DEFAULT_DATA_DIRECTORY_NAME = '.countersign';

export interface LocalDataDirectoryOptions {
  /** The directory relative paths are resolved against, usually the project root (`process.cwd()`). */
  readonly baseDirectory: string;
  /**
   * The caller's COUNTERSIGN_DATA_DIR, when set; absolute or relative to `baseDirectory`.
   * Library code reads no environment: the entry point passes it in.
   * @default - `<baseDirectory>/.countersign`
   */
  readonly configuredPath?: string | undefined;
}

/**
 * The on-disk home of local embedded mode: dynalite tables, blobs (the local S3 stand-in)
 * and keys (JWT signing key, local keyring). Created on first use; at every start it and
 * everything under it is made owner-only (folders 0700, files 0600), also when the folders
 * existed before with looser modes, and a start stops with a clear message when that fails.
 *
 * @example
 * const dataDirectory = await LocalDataDirectory.prepare({
 *   baseDirectory: process.cwd(),
 *   configuredPath: process.env.COUNTERSIGN_DATA_DIR,
 * });
 * const issuer = await LocalJwtIssuer.open({ keysDirectory: dataDirectory.keysDirectory });
 */
export class LocalDataDirectory {
  /** Absolute path of the data directory. */
  public readonly root: string;
  /** Where dynalite keeps its LevelDB files. */
  public readonly dynaliteDirectory: string;
  /** Where oversized sealed state and other blobs go (the local S3 stand-in). */
  public readonly blobsDirectory: string;
  /** Where key material lives; files in it are written with mode 0600. */
  public readonly keysDirectory: string;

  private constructor(root: string) {
    this.root = root;
    this.dynaliteDirectory = path.join(root, 'dynalite');
    this.blobsDirectory = path.join(root, 'blobs');
    this.keysDirectory = path.join(root, 'keys');
  }

  /** Resolves the directory without touching the disk. */
  public static resolve(options: LocalDataDirectoryOptions): LocalDataDirectory {
    const configuredPath = options.configuredPath?.trim();
    if (options.configuredPath !== undefined && !configuredPath) {
      throw new CountersignError(
        'configuration',
        'COUNTERSIGN_DATA_DIR is set but empty: unset it or give it a directory path.',
      );
    }
    const root = path.resolve(options.baseDirectory, configuredPath || DEFAULT_DATA_DIRECTORY_NAME);
    return new LocalDataDirectory(root);
  }

  /** Resolves the directory, creates it and its subfolders (idempotent) and makes it all private. */
  public static async prepare(options: LocalDataDirectoryOptions): Promise<LocalDataDirectory> {
    const directory = LocalDataDirectory.resolve(options);
    const folders = [
      directory.root,
      directory.dynaliteDirectory,
      directory.blobsDirectory,
      directory.keysDirectory,
    ];
    for (const folder of folders) {
      await mkdir(folder, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
    }
    // A folder given by COUNTERSIGN_DATA_DIR may sit inside some other repository: ignore itself.
    await writeFile(path.join(directory.root, '.gitignore'), '*\n', { flag: 'w', mode: PRIVATE_FILE_MODE });
    await enforcePrivateModes(directory.root);
    return directory;
  }
}
