import type { Stats } from 'node:fs';
import { chmod, lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { CountersignError } from '../core/errors.js';

/** Owner-only: what every folder and every file under the local data directory is given. */
export const PRIVATE_DIRECTORY_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Why an entry of the data directory cannot be kept private, or `undefined` when it can: it
 * belongs to another user (whose files we may not and must not change), or it is a symbolic
 * link (its target lies outside the folder this check guards, and chmod would follow it).
 *
 * @example
 * formatUnprivateEntryProblem(await lstat(file), process.getuid()); // undefined for our own file
 */
export function formatUnprivateEntryProblem(
  stats: Pick<Stats, 'uid' | 'isSymbolicLink'>,
  userId: number | undefined,
): string | undefined {
  if (stats.isSymbolicLink()) return 'is a symbolic link; local mode keeps only its own files there';
  if (userId !== undefined && stats.uid !== userId) {
    return `belongs to another user (uid ${stats.uid}); the data directory must be yours alone`;
  }
  return undefined;
}

/**
 * Makes `root` and everything under it owner-only (folders 0700, files 0600), also what an
 * earlier version or another tool created with looser modes, then checks that it holds: the
 * store's files, blobs and keys are readable by this user only. Stops with a message naming
 * the first entry that cannot be made private and what to do about it.
 *
 * @example
 * await enforcePrivateModes('/home/ana/project/.countersign');
 */
export async function enforcePrivateModes(root: string): Promise<void> {
  // Windows has no POSIX modes; its ACLs are the user's profile's business.
  if (process.platform === 'win32') return;
  const userId = process.getuid?.();
  const pending = [root];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const stats = await lstat(next);
    const problem = formatUnprivateEntryProblem(stats, userId);
    if (problem !== undefined) throw notPrivate(root, next, problem);
    const wanted = stats.isDirectory() ? PRIVATE_DIRECTORY_MODE : PRIVATE_FILE_MODE;
    if ((stats.mode & 0o777) !== wanted) {
      await chmod(next, wanted);
      const after = (await lstat(next)).mode & 0o777;
      if (after !== wanted) {
        throw notPrivate(
          root,
          next,
          `keeps mode ${after.toString(8)} after chmod ${wanted.toString(8)} (a file system without POSIX modes?)`,
        );
      }
    }
    if (stats.isDirectory()) {
      for (const name of await readdir(next)) pending.push(path.join(next, name));
    }
  }
}

function notPrivate(root: string, entry: string, problem: string): CountersignError {
  return new CountersignError(
    'configuration',
    `The local data directory ${root} must be private to you, but ${entry} ${problem}. Fix or remove it, or point COUNTERSIGN_DATA_DIR at another folder.`,
  );
}
