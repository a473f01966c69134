import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalDataDirectory } from '../../lambdas/local/local-data-directory.js';
import { formatUnprivateEntryProblem } from '../../lambdas/local/private-file-modes.js';

/** Every entry under `root` (itself included) with its permission bits, as octal text. */
async function modesUnder(root: string): Promise<Record<string, string>> {
  const modes: Record<string, string> = {};
  const pending = [root];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const stats = await lstat(next);
    modes[path.relative(root, next) || '.'] = (stats.mode & 0o777).toString(8);
    if (stats.isDirectory()) for (const name of await readdir(next)) pending.push(path.join(next, name));
  }
  return modes;
}

const temporaryDirectories: string[] = [];

async function createBaseDirectory(): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'countersign-data-'));
  temporaryDirectories.push(directory);
  return directory;
}

afterEach(async () => {
  await Promise.all(temporaryDirectories.splice(0).map((directory) => rm(directory, { recursive: true })));
});

describe('LocalDataDirectory', () => {
  it('creates .countersign with its subfolders, owner-only and git-ignored', async () => {
    // Prepare
    const baseDirectory = await createBaseDirectory();

    // Act
    const directory = await LocalDataDirectory.prepare({ baseDirectory });

    // Assess
    expect(directory.root).toBe(path.join(baseDirectory, '.countersign'));
    for (const folder of [directory.dynaliteDirectory, directory.blobsDirectory, directory.keysDirectory]) {
      expect(path.dirname(folder)).toBe(directory.root);
      expect((await stat(folder)).isDirectory()).toBe(true);
    }
    expect((await stat(directory.root)).mode & 0o777).toBe(0o700);
    expect(await readFile(path.join(directory.root, '.gitignore'), 'utf8')).toBe('*\n');
  });

  it('uses the configured path, relative to the base directory or absolute', async () => {
    // Prepare
    const baseDirectory = await createBaseDirectory();
    const absolute = path.join(baseDirectory, 'elsewhere');

    // Act
    const relative = LocalDataDirectory.resolve({ baseDirectory, configuredPath: 'data/local' });
    const fromAbsolute = await LocalDataDirectory.prepare({ baseDirectory, configuredPath: absolute });

    // Assess
    expect(relative.root).toBe(path.join(baseDirectory, 'data', 'local'));
    expect(fromAbsolute.root).toBe(absolute);
    expect((await stat(fromAbsolute.keysDirectory)).isDirectory()).toBe(true);
  });

  it('refuses an empty configured path instead of falling back silently', () => {
    // Act
    const resolveEmpty = () => LocalDataDirectory.resolve({ baseDirectory: '/tmp', configuredPath: '  ' });

    // Assess
    expect(resolveEmpty).toThrow(/COUNTERSIGN_DATA_DIR/);
  });

  it('makes folders 0700 and files 0600 that existed before with looser modes, keys and store files included', async () => {
    // Prepare: a data directory an earlier version (or a default umask) left readable by others.
    const baseDirectory = await createBaseDirectory();
    const root = path.join(baseDirectory, '.countersign');
    await mkdir(path.join(root, 'dynalite'), { recursive: true, mode: 0o755 });
    await mkdir(path.join(root, 'keys'), { recursive: true, mode: 0o755 });
    await mkdir(path.join(root, 'blobs', 'RUN#1'), { recursive: true, mode: 0o777 });
    await writeFile(path.join(root, 'dynalite', '000005.ldb'), 'table data', { mode: 0o644 });
    await writeFile(path.join(root, 'keys', 'local-master.key'), 'k'.repeat(32), { mode: 0o644 });
    await writeFile(path.join(root, 'blobs', 'RUN#1', 'state'), 'sealed', { mode: 0o666 });
    await writeFile(path.join(root, '.gitignore'), '*\n', { mode: 0o644 });
    for (const folder of ['.', 'dynalite', 'keys', 'blobs', 'blobs/RUN#1']) {
      await chmod(path.join(root, folder), folder === 'blobs/RUN#1' ? 0o777 : 0o755);
    }

    // Act
    await LocalDataDirectory.prepare({ baseDirectory });

    // Assess
    expect(await modesUnder(root)).toEqual({
      '.': '700',
      '.gitignore': '600',
      blobs: '700',
      'blobs/RUN#1': '700',
      'blobs/RUN#1/state': '600',
      dynalite: '700',
      'dynalite/000005.ldb': '600',
      keys: '700',
      'keys/local-master.key': '600',
    });
  });

  it('stops with a message naming a symbolic link it finds inside, instead of changing its target', async () => {
    // Prepare
    const baseDirectory = await createBaseDirectory();
    const outside = path.join(baseDirectory, 'outside.txt');
    await writeFile(outside, 'not ours to change', { mode: 0o644 });
    await mkdir(path.join(baseDirectory, '.countersign', 'keys'), { recursive: true });
    await symlink(outside, path.join(baseDirectory, '.countersign', 'keys', 'linked.key'));

    // Act
    const preparing = LocalDataDirectory.prepare({ baseDirectory });

    // Assess
    await expect(preparing).rejects.toThrow(/keys\/linked\.key is a symbolic link.*COUNTERSIGN_DATA_DIR/);
    expect((await stat(outside)).mode & 0o777).toBe(0o644);
  });

  it('names an entry that belongs to another user as one it cannot keep private', () => {
    // Prepare
    const entry = (uid: number) => ({ uid, isSymbolicLink: () => false });

    // Act
    const foreign = formatUnprivateEntryProblem(entry(1001), 1000);
    const own = formatUnprivateEntryProblem(entry(1000), 1000);

    // Assess
    expect(foreign).toMatch(/belongs to another user \(uid 1001\)/);
    expect(own).toBeUndefined();
  });
});
