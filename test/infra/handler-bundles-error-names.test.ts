import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveProjectPath } from '../../lib/project-path.js';
import { bundle, useBundleDirectory } from './handler-bundles-support.js';

describe('the Lambda handler bundles', () => {
  const bundles = useBundleDirectory();

  it('keep the error names a card and a log show when minified: PreviewTimeout, not a letter', async () => {
    // Prepare
    await bundle(
      resolveProjectPath('test/infra/fixtures/card-names-bundle-entry.ts'),
      bundles.directory,
      'names',
    );
    const source = await readFile(join(bundles.directory, 'names.mjs'), 'utf8');
    const bundled = await import(pathToFileURL(join(bundles.directory, 'names.mjs')).href);
    const writer = (name: string, preview: () => Promise<string[]>) => ({
      name,
      description: name,
      effect: 'write',
      input: bundled.z.object({}),
      execute: async () => ({ content: 'ok', isError: false }),
      preview,
    });
    const call = (index: number, tool: string) => ({
      index,
      callId: `call-${index}`,
      tool,
      arguments: {},
      offered: true,
    });
    const silent = () => undefined;

    // Act
    const previews = await bundled.capturePreviews({
      calls: bundled.resolveCalls(
        [call(0, 'slow_write'), call(1, 'empty_write'), call(2, 'refusing_write')],
        new bundled.ToolRegistry([
          writer('slow_write', () => new Promise(() => undefined)),
          writer('empty_write', async () => []),
          writer('refusing_write', async () => {
            throw new bundled.CountersignError('forbidden', 'Access denied for user x@host');
          }),
        ]),
      ),
      actingUser: { userId: 'editor', grants: [], pageAccess: '*', languageAccess: '*', toolAccess: [] },
      context: {},
      logger: { debug: silent, info: silent, warn: silent, error: silent },
      timeBudgetMs: 20,
    });

    // Assess: the classes were renamed by minification, and the names shown are still the real ones.
    expect(source).not.toMatch(/class PreviewTimeout\b/);
    expect(previews.map((call: { preview?: { lines: string[] } }) => call.preview?.lines)).toEqual([
      ['Preview failed (PreviewTimeout).'],
      ['Preview failed (EmptyPreview).'],
      ['Preview failed (CountersignError).'],
    ]);
    expect(bundled.nameErrorClass(new bundled.CountersignError('internal', 'x'))).toBe('CountersignError');
  });
});
