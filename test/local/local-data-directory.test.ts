import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalDataDirectory } from '../../lambdas/local/local-data-directory.js';

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
});
