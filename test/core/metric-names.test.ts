import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../lambdas/core/metric-names.js';
import { resolveProjectPath } from '../../lib/project-path.js';

/** Every `.count('Name'` and `.observe('Name'` (a port call) in the Lambda sources, by name. */
async function readEmittedMetricNames(): Promise<Set<string>> {
  const root = resolveProjectPath('lambdas');
  const files = (await readdir(root, { recursive: true })).filter((file) => file.endsWith('.ts'));
  const emitted = new Set<string>();
  for (const file of files) {
    const source = await readFile(join(root, file), 'utf8');
    for (const match of source.matchAll(/\.(?:count|observe)\(\s*'([A-Za-z]+)'/g)) {
      if (match[1]) emitted.add(match[1]);
    }
  }
  return emitted;
}

describe('metric names', () => {
  it('lists every metric the Lambdas emit, and only those', async () => {
    // Act
    const emitted = await readEmittedMetricNames();

    // Assess
    expect([...emitted].filter((name) => !(METRIC_NAMES as readonly string[]).includes(name))).toEqual([]);
    expect(METRIC_NAMES.filter((name) => !emitted.has(name))).toEqual([]);
    expect(new Set(METRIC_NAMES).size).toBe(METRIC_NAMES.length);
  });
});
