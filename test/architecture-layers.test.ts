import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveProjectPath } from '../lib/project-path.js';

/**
 * Core is the floor; the contract rests on core alone (README, "A map of the code"). Each layer
 * names the folders of lambdas/ its files may import; any other relative import is a leak.
 */
const LAYERS: Readonly<Record<string, readonly string[]>> = {
  core: ['core'],
  contract: ['contract', 'core'],
};

/** Every module a file names: `from '…'`, `import '…'` and `import('…')`, across line breaks. */
const MODULE_SPECIFIER = /\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g;

/** The file and each module it imports from another folder of lambdas/ than its layer allows. */
async function findLayerLeaks(layer: string): Promise<string[]> {
  const lambdas = resolveProjectPath('lambdas');
  const folder = join(lambdas, layer);
  const files = (await readdir(folder, { recursive: true })).filter((file) => file.endsWith('.ts'));
  const leaks: string[] = [];
  for (const file of files) {
    const path = join(folder, file);
    const source = await readFile(path, 'utf8');
    for (const [, specifier] of source.matchAll(MODULE_SPECIFIER)) {
      if (specifier === undefined || !specifier.startsWith('.')) continue;
      const target = relative(lambdas, join(dirname(path), specifier));
      const targetLayer = target.startsWith('..') ? target : target.split(sep)[0];
      if (!LAYERS[layer]?.includes(targetLayer ?? '')) leaks.push(`lambdas/${layer}/${file} -> ${specifier}`);
    }
  }
  return leaks;
}

describe('layers', () => {
  it('core imports nothing outside core', async () => {
    expect(await findLayerLeaks('core')).toEqual([]);
  });

  it('the contract imports only itself and core', async () => {
    expect(await findLayerLeaks('contract')).toEqual([]);
  });

  it('reads the imports it guards', async () => {
    // A scan that matched nothing would pass every layer: it must see the contract's imports.
    const source = await readFile(resolveProjectPath('lambdas/contract/admin-schemas.ts'), 'utf8');
    const specifiers = [...source.matchAll(MODULE_SPECIFIER)].map(([, specifier]) => specifier);
    expect(specifiers).toContain('../core/skills/skill-ingest-requests.js');
    expect(specifiers).toContain('zod/mini');
  });
});
