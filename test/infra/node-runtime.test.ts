import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LAMBDA_RUNTIME } from '../../lib/functions.js';
import { resolveProjectPath } from '../../lib/project-path.js';

/** The major of a Lambda runtime name (`nodejs24.x` → 24). */
function runtimeMajor(runtimeName: string): number {
  const match = /^nodejs(\d+)\.x$/.exec(runtimeName);
  if (!match) throw new Error(`${runtimeName} is not a Node.js Lambda runtime`);
  return Number(match[1]);
}

describe('the Node.js the project runs on', () => {
  it('is the deployed Lambda runtime major, in every npm script (tests, local mode, bench)', () => {
    // Act: npm test runs this through vitest, whose `node` is the first on the scripts' PATH.
    const scriptsMajor = Number(process.versions.node.split('.')[0]);

    // Assess
    expect(scriptsMajor).toBe(runtimeMajor(LAMBDA_RUNTIME.name));
  });

  it('comes from the pinned node dev dependency of the same major', () => {
    // Prepare
    const manifest = JSON.parse(readFileSync(resolveProjectPath('package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
      engines: { node: string };
    };

    // Act
    const pinnedMajor = Number(manifest.devDependencies.node?.split('.')[0]);

    // Assess
    expect(pinnedMajor).toBe(runtimeMajor(LAMBDA_RUNTIME.name));
    expect(manifest.engines.node).toBe('>=22');
  });
});
