import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { describe, expect, it } from 'vitest';
import { createBundlingOptions, TEAM_TOOLS_ALIAS } from '../../lib/functions.js';

describe('createBundlingOptions', () => {
  it('bundles with the local esbuild into minified ESM that can still require CommonJS', () => {
    // Act
    const options = createBundlingOptions('/teams/tools.ts');

    // Assess
    expect(options.forceDockerBundling).toBe(false);
    expect(options.format).toBe(OutputFormat.ESM);
    expect(options.minify).toBe(true);
    expect(options.banner).toMatch(/createRequire.*const require = .*\(import\.meta\.url\)/);
    expect(options.externalModules).toEqual(['@aws-sdk/*']);
  });

  it('aliases countersign-team-tools to the configured module', () => {
    // Act
    const options = createBundlingOptions('/teams/tools.ts');

    // Assess
    expect(TEAM_TOOLS_ALIAS).toBe('countersign-team-tools');
    expect(options.esbuildArgs).toEqual({ '--alias:countersign-team-tools': '/teams/tools.ts' });
  });
});
