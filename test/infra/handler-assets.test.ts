import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEsbuildOptions, LAMBDA_RUNTIME, TEAM_TOOLS_ALIAS } from '../../lib/functions.js';
import {
  buildHandlerAsset,
  createHandlerCode,
  type HandlerAssetManifest,
  type HandlerCodeOptions,
  MANIFEST_FILE,
} from '../../lib/handler-assets.js';
import { resolveProjectPath } from '../../lib/project-path.js';

const MARKER_TOOLS = resolveProjectPath('test/infra/fixtures/marker-team-tools.ts');
const MARKER = 'marker_team_tool';

/** Synthesizes one function whose code is `createHandlerCode(name, options)`; returns its asset folder. */
function synthesizeHandler(
  outdir: string,
  name: 'execute-tools' | 'prepare',
  options: HandlerCodeOptions,
): string {
  const app = new App({ outdir });
  new LambdaFunction(new Stack(app, 'Handler'), 'Handler', {
    code: createHandlerCode(name, options),
    handler: 'index.handler',
    runtime: LAMBDA_RUNTIME,
  });
  const assembly = app.synth();
  const [asset] = readdirSync(assembly.directory).filter((entry) => entry.startsWith('asset.'));
  return join(assembly.directory, String(asset));
}

describe('createEsbuildOptions', () => {
  it('bundles into minified ESM for the runtime’s Node that can still require CommonJS', () => {
    // Act
    const options = createEsbuildOptions('/entry.ts', '/teams/tools.ts');

    // Assess
    expect(options.format).toBe('esm');
    expect(options.minify).toBe(true);
    expect(options.target).toBe('node24');
    expect(options.banner?.js).toMatch(/createRequire.*const require = .*\(import\.meta\.url\)/);
    expect(TEAM_TOOLS_ALIAS).toBe('countersign-team-tools');
    expect(options.alias).toMatchObject({ 'countersign-team-tools': '/teams/tools.ts' });
  });
});

describe('the handler assets', () => {
  let directory: string;

  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), 'countersign-handler-assets-'));
  });

  afterAll(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('bundle the team tools beside a handler that reads them, and not beside one that does not', () => {
    // Act
    const executeToolsReads = buildHandlerAsset(
      esbuild,
      'execute-tools',
      join(directory, 'execute-tools'),
      MARKER_TOOLS,
    );
    const prepareReads = buildHandlerAsset(esbuild, 'prepare', join(directory, 'prepare'), MARKER_TOOLS);

    // Assess
    expect(executeToolsReads).toBe(true);
    expect(readFileSync(join(directory, 'execute-tools', 'index.mjs'), 'utf8')).toContain(
      '"./team-tools.mjs"',
    );
    expect(readFileSync(join(directory, 'execute-tools', 'index.mjs'), 'utf8')).not.toContain(MARKER);
    expect(readFileSync(join(directory, 'execute-tools', 'team-tools.mjs'), 'utf8')).toContain(MARKER);
    expect(prepareReads).toBe(false);
    // No team tools; the S3 overflow client's side module is beside every handler.
    expect(readdirSync(join(directory, 'prepare')).sort()).toEqual(['index.mjs', 'node_modules']);
    expect(existsSync(join(directory, 'prepare', 'node_modules/@aws-sdk/client-s3/index.mjs'))).toBe(true);
  });

  it('bundle a source checkout at synth with the team tools module, each handler its own', () => {
    // Prepare
    const app = new App({ outdir: join(directory, 'source.out') });
    const stack = new Stack(app, 'Handlers');
    const options = { prebuiltDirectory: join(directory, 'no-prebuilt'), toolsModulePath: MARKER_TOOLS };
    for (const name of ['execute-tools', 'prepare'] as const) {
      new LambdaFunction(stack, name, {
        code: createHandlerCode(name, options),
        handler: 'index.handler',
        runtime: LAMBDA_RUNTIME,
      });
    }

    // Act
    const assembly = app.synth();
    const assets = readdirSync(assembly.directory).filter((entry) => entry.startsWith('asset.'));
    const teamToolsFiles = assets
      .map((asset) => join(assembly.directory, asset, 'team-tools.mjs'))
      .filter((path) => existsSync(path));

    // Assess: two assets (a cache key blind to the handler would stage one), one with the tools.
    expect(assets).toHaveLength(2);
    expect(teamToolsFiles).toHaveLength(1);
    expect(readFileSync(String(teamToolsFiles[0]), 'utf8')).toContain(MARKER);
  });

  it('deploy the prebuilt folder as it is without team tools, and add only the team tools with them', () => {
    // Prepare: a prebuilt folder as `npm run build` writes it, its bundle marked to tell it apart.
    const prebuiltDirectory = join(directory, 'prebuilt');
    mkdirSync(join(prebuiltDirectory, 'execute-tools'), { recursive: true });
    cpSync(
      join(directory, 'execute-tools', 'index.mjs'),
      join(prebuiltDirectory, 'execute-tools', 'index.mjs'),
    );
    writeFileSync(join(prebuiltDirectory, 'execute-tools', 'index.mjs'), '// prebuilt marker\n', {
      flag: 'a',
    });
    writeFileSync(
      join(prebuiltDirectory, 'execute-tools', 'team-tools.mjs'),
      'export const teamTools = [];\n',
    );
    const prebuilt = {
      runtime: LAMBDA_RUNTIME.name,
      handlers: { 'execute-tools': { importsTeamTools: true } },
    } as unknown as HandlerAssetManifest;
    writeFileSync(join(prebuiltDirectory, MANIFEST_FILE), JSON.stringify(prebuilt));

    // Act
    const without = synthesizeHandler(join(directory, 'prebuilt.out'), 'execute-tools', {
      prebuilt,
      prebuiltDirectory,
    });
    const withTools = synthesizeHandler(join(directory, 'prebuilt-tools.out'), 'execute-tools', {
      prebuilt,
      prebuiltDirectory,
      toolsModulePath: MARKER_TOOLS,
    });

    // Assess
    expect(readFileSync(join(without, 'index.mjs'), 'utf8')).toContain('// prebuilt marker');
    expect(readFileSync(join(without, 'team-tools.mjs'), 'utf8')).not.toContain(MARKER);
    expect(readFileSync(join(withTools, 'index.mjs'), 'utf8')).toContain('// prebuilt marker');
    expect(readFileSync(join(withTools, 'team-tools.mjs'), 'utf8')).toContain(MARKER);
  });
});
