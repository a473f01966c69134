import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The bytes of a local key file, created with `create()` on first use: the folder owner-only
 * (0700), the file 0600 and written with `wx` (two processes starting at once never overwrite each
 * other's key; the second reads the first's), its mode tightened back if someone loosened it.
 *
 * @example
 * const masterKey = await readOrCreateKeyFile('.countersign/keys', 'master-key.bin', () => randomBytes(32));
 */
export async function readOrCreateKeyFile(
  directory: string,
  fileName: string,
  create: () => string | Uint8Array,
): Promise<Buffer> {
  const path = join(directory, fileName);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  try {
    await writeFile(path, create(), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  await chmod(path, 0o600);
  return readFile(path);
}
