import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { describe, expect, it } from 'vitest';
import {
  createBundlingOptions,
  LAMBDA_RUNTIME,
  resolveProjectPath,
  TEAM_TOOLS_ALIAS,
} from '../../lib/functions.js';

describe('createBundlingOptions', () => {
  it('bundles with the local esbuild into minified ESM that can still require CommonJS', () => {
    // Act
    const options = createBundlingOptions('/teams/tools.ts');

    // Assess
    expect(options.forceDockerBundling).toBe(false);
    expect(options.format).toBe(OutputFormat.ESM);
    expect(options.minify).toBe(true);
    expect(options.banner).toMatch(/createRequire.*const require = .*\(import\.meta\.url\)/);
    // The AWS SDK is bundled (it inits faster than the runtime's copy); only side modules stay out.
    expect(options.externalModules).toEqual(['gpt-tokenizer/encoding/cl100k_base']);
  });

  it('aliases countersign-team-tools to the configured module', () => {
    // Act
    const options = createBundlingOptions('/teams/tools.ts');

    // Assess
    expect(TEAM_TOOLS_ALIAS).toBe('countersign-team-tools');
    expect(options.esbuildArgs).toMatchObject({ '--alias:countersign-team-tools': '/teams/tools.ts' });
  });

  it('bundles the configured team tools module in place of countersign-team-tools', () => {
    // Prepare
    const outdir = mkdtempSync(join(tmpdir(), 'countersign-team-tools-'));
    const app = new App({ outdir });
    new NodejsFunction(new Stack(app, 'TeamTools'), 'Handler', {
      entry: resolveProjectPath('test/infra/fixtures/team-tools-entry.ts'),
      projectRoot: resolveProjectPath(''),
      depsLockFilePath: resolveProjectPath('package-lock.json'),
      runtime: LAMBDA_RUNTIME,
      bundling: createBundlingOptions(resolveProjectPath('test/infra/fixtures/marker-team-tools.ts')),
    });

    try {
      // Act
      const assembly = app.synth();
      const [bundle] = readdirSync(assembly.directory).filter((entry) => entry.startsWith('asset.'));
      const code = readFileSync(join(assembly.directory, String(bundle), 'index.mjs'), 'utf8');

      // Assess
      expect(code).toContain('marker_team_tool');
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
