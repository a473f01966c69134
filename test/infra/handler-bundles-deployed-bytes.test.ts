import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import * as esbuild from 'esbuild';
import { describe, expect, it } from 'vitest';
import { LAMBDA_RUNTIME } from '../../lib/functions.js';
import { buildHandlerAsset, createHandlerCode } from '../../lib/handler-assets.js';
import { TOOLS_MODULE, useBundleDirectory } from './handler-bundles-support.js';

describe('the Lambda handler bundles', () => {
  const bundles = useBundleDirectory();

  it('are the bytes the CDK deploys: the build and the construct bundle alike, side modules included', async () => {
    // Prepare
    const outdir = join(bundles.directory, 'cdk.out');
    const app = new App({ outdir });
    const stack = new Stack(app, 'Bundles');
    for (const name of ['prepare', 'model-turn'] as const) {
      new LambdaFunction(stack, name, {
        code: createHandlerCode(name, { prebuiltDirectory: join(bundles.directory, 'no-prebuilt') }),
        handler: 'index.handler',
        runtime: LAMBDA_RUNTIME,
      });
    }

    // Act
    const assembly = app.synth();
    const assets = (await readdir(assembly.directory)).filter((entry) => entry.startsWith('asset.'));
    const deployed = await Promise.all(
      assets.map(async (asset) => {
        const assetDirectory = join(assembly.directory, asset);
        const sideModule = join(assetDirectory, 'node_modules/gpt-tokenizer/encoding/cl100k_base.mjs');
        return {
          bytes: (await readFile(join(assetDirectory, 'index.mjs'))).byteLength,
          sideModuleBytes: (await readFile(sideModule).catch(() => undefined))?.byteLength,
        };
      }),
    );
    // What `npm run build` ships for the same handlers (lib/handler-assets.ts).
    const benched = async (name: 'prepare' | 'model-turn') => {
      buildHandlerAsset(esbuild, name, join(bundles.directory, 'built', name), TOOLS_MODULE);
      return (await readFile(join(bundles.directory, 'built', name, 'index.mjs'))).byteLength;
    };
    const prepareBytes = await benched('prepare');
    const modelTurnBytes = await benched('model-turn');
    const benchedSideModule = (
      await readFile(
        join(bundles.directory, 'built/model-turn/node_modules/gpt-tokenizer/encoding/cl100k_base.mjs'),
      )
    ).byteLength;

    // Assess: model-turn ships the tokenizer beside it, built alike; prepare ships nothing beside
    expect(deployed).toHaveLength(2);
    expect(deployed).toContainEqual({ bytes: prepareBytes, sideModuleBytes: undefined });
    expect(deployed).toContainEqual({
      bytes: modelTurnBytes,
      sideModuleBytes: benchedSideModule,
    });
  }, 300_000); // a whole cdk synth with bundling: more than the default 60 s on a busy machine.
});
