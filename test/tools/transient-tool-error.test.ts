import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { isTransientToolError, TransientToolError } from '../../lambdas/tools/authoring.js';

describe('TransientToolError (countersign/tools)', () => {
  let directory: string | undefined;

  afterAll(async () => {
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('is told apart by its name, which a team tools module bundled and minified on its own keeps', async () => {
    // Prepare: a team's module, bundled apart and minified as the construct bundles it: its own
    // copy of the class, so only the name can say what it is.
    directory = await mkdtemp(join(tmpdir(), 'countersign-transient-'));
    const entry = join(directory, 'team-tools.ts');
    await writeFile(
      entry,
      `import { TransientToolError } from ${JSON.stringify(new URL('../../lambdas/tools/authoring.ts', import.meta.url).pathname)};
export function fail() { throw new TransientToolError('The ticket service is busy.'); }`,
    );
    const outfile = join(directory, 'team-tools.mjs');
    await build({
      entryPoints: [entry],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'node',
      outfile,
    });
    const bundled = (await import(pathToFileURL(outfile).href)) as { fail: () => never };

    // Act
    const thrown = (() => {
      try {
        bundled.fail();
      } catch (error) {
        return error;
      }
      return undefined;
    })();

    // Assess
    expect(thrown).not.toBeInstanceOf(TransientToolError);
    expect(isTransientToolError(thrown)).toBe(true);
    expect((thrown as Error).name).toBe('TransientToolError');
    expect(isTransientToolError(new Error('The ticket service is busy.'))).toBe(false);
  });
});
