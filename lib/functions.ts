import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import type { BuildOptions as EsbuildOptions } from 'esbuild';
import { RUNBOOK_MARKDOWN_DEFINE } from '../lambdas/handlers/http/runbook-page.js';
import { resolveProjectPath } from './project-path.js';
import {
  computeEncryptionSdkAliases,
  computeEncryptionSdkSideModule,
  computeMcpClientSideModules,
  computeS3ClientSideModule,
  computeSignInLibrarySideModule,
  computeTokenizerSideModule,
  type SideModule,
} from './side-modules.js';

/** The newest Node.js runtime aws-cdk-lib knows; pinned (not NODEJS_LATEST) so a CDK upgrade is a visible diff. */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

/** What the page's scripts are built for: browsers with ES2022 (the page also needs import maps). */
const BROWSER_TARGET = 'es2022';

/** The esbuild alias the handlers import team tools through. */
export const TEAM_TOOLS_ALIAS = 'countersign-team-tools';

// esbuild emits ESM; CommonJS dependencies (the Encryption SDK's) still call require().
const REQUIRE_BANNER =
  "import { createRequire as countersignCreateRequire } from 'node:module'; const require = countersignCreateRequire(import.meta.url);";

/**
 * The esbuild settings of every handler bundle, in one place: `npm run build`, the bundling at
 * synth (lib/handler-assets.ts) and the bench all go through `createEsbuildOptions` and the
 * side modules, so what the bench measures is what deploys.
 */
export interface HandlerBundleSettings {
  /** esbuild's `--target`, from the Lambda runtime (`node24`). */
  readonly target: string;
  /** ES module builds first, so dependencies that ship one tree-shake. */
  readonly mainFields: readonly string[];
  /** The `require` shim for CommonJS dependencies inside an ES module bundle. */
  readonly banner: string;
  /**
   * Left out of the bundle: the side modules only (shipped beside it). Nothing is left to the
   * Lambda runtime: the AWS SDK v3 is bundled and tree-shaken, because a handler importing the
   * runtime's SDK initialises 1.5-2x slower (measured by `npm run bench`).
   */
  readonly externalModules: readonly string[];
  /** Import paths bundled as another module (`--alias:<from>=<to>`). */
  readonly aliases: Readonly<Record<string, string>>;
  /**
   * Import paths left out of the handler bundle and shipped beside it, each bundled on its own
   * into `node_modules/<package>/`, where Node resolves the handler's lazy `import()`. For the
   * cl100k tokenizer: its 1.7 MB of ranks, even behind a lazy import inside the bundle, were
   * scanned by V8 at every model-turn cold start (about a third of its init).
   */
  readonly sideModules: readonly SideModule[];
}

/**
 * The format every bundle shares, handler or team tools module: target, module fields and the
 * `require` shim. Resolves nothing, so a CDK app that bundles only its tools module needs none
 * of the handlers' dependencies installed.
 *
 * @example
 * computeBundleFormat().target; // 'node24'
 */
function computeBundleFormat(): Pick<HandlerBundleSettings, 'target' | 'mainFields' | 'banner'> {
  return {
    target: LAMBDA_RUNTIME.name.replace(/^nodejs(\d+)\.x$/, 'node$1'),
    mainFields: ['module', 'main'],
    banner: REQUIRE_BANNER,
  };
}

/**
 * The handler bundle settings for a team tools module. The AWS Encryption SDK is a side
 * module (`computeEncryptionSdkSideModule`), kept small without changing what runs:
 * - `@aws-crypto/client-node` ships an ES module build but no `module` field, so esbuild would
 *   take its CommonJS index, which requires every keyring (RSA, hierarchical, caching) and
 *   tree-shakes nothing; the side module's entry (lib/bundling/encryption-sdk.ts) names the
 *   part the sealer calls from the ES module builds of the packages that make it up, and the
 *   KMS keyring's default client is left out (the handlers pass it their own).
 * Two aliases, applied to the side module and the handlers alike:
 * - `readable-stream` is the npm copy of Node's stream module for old runtimes; the SDK uses
 *   its `Transform`, `PassThrough`, `pipeline` and `finished`: lib/bundling/readable-stream.ts
 *   gives it Node's built-in ones (and readable-stream's optional `pipeline` callback).
 * - `bn.js`: asn1.js pins bn.js 4 beside the bn.js 5 the SDK itself uses; asn1.js calls only
 *   `new BN(bytes)`, `toArray()` and `toString(10)`, which both majors share, so one copy ships.
 *
 * @example
 * computeHandlerBundleSettings(resolveProjectPath('lambdas/tools/no-team-tools.ts')).aliases;
 */
export function computeHandlerBundleSettings(toolsModulePath: string): HandlerBundleSettings {
  const tokenizer = computeTokenizerSideModule();
  const mcpClient = computeMcpClientSideModules();
  const encryptionSdk = computeEncryptionSdkSideModule();
  const s3Client = computeS3ClientSideModule();
  const sideModules = [tokenizer, encryptionSdk, ...mcpClient, s3Client, computeSignInLibrarySideModule()];
  return {
    ...computeBundleFormat(),
    externalModules: sideModules.map((module) => module.importPath),
    sideModules,
    aliases: {
      [TEAM_TOOLS_ALIAS]: toolsModulePath,
      ...computeEncryptionSdkAliases(),
    },
  };
}

/**
 * How one side module is bundled (without its `outfile`): a plain ES module build, or built
 * like a handler when it has CommonJS dependencies (`SideModule.handlerLike`).
 */
function createSideModuleEsbuildOptions(module: SideModule, settings: HandlerBundleSettings): EsbuildOptions {
  return {
    entryPoints: [module.entryPath],
    bundle: true,
    // A browser's library is built for the browsers the page supports (import maps with integrity).
    platform: module.servedToBrowsers ? 'browser' : 'node',
    format: 'esm',
    target: module.servedToBrowsers ? BROWSER_TARGET : settings.target,
    minify: true,
    logLevel: 'warning',
    ...(module.handlerLike
      ? {
          mainFields: [...settings.mainFields],
          banner: { js: settings.banner },
          alias: { ...module.handlerLike.aliases },
        }
      : {}),
  };
}

/**
 * Builds the side modules of `computeHandlerBundleSettings` beside a bundle written to `directory`,
 * when the bundle imports them: the one way they are built, at synth (lib/handler-assets.ts),
 * by `npm run build`, the bench and the tests. Returns the files built.
 *
 * @example
 * buildSideModulesBeside(esbuild, directory, bundleText, resolveProjectPath('lambdas/tools/no-team-tools.ts'));
 *
 * @internal
 */
export function buildSideModulesBeside(
  esbuild: Pick<typeof import('esbuild'), 'buildSync'>,
  directory: string,
  bundleText: string,
  toolsModulePath: string,
): string[] {
  const settings = computeHandlerBundleSettings(toolsModulePath);
  const built: string[] = [];
  for (const module of settings.sideModules) {
    if (!bundleText.includes(module.importPath)) continue;
    const output = join(directory, module.outputPath);
    mkdirSync(dirname(output), { recursive: true });
    writeFileSync(join(directory, module.packageJsonPath), module.packageJson);
    writeFileSync(output, bundleSideModule(esbuild, createSideModuleEsbuildOptions(module, settings)));
    built.push(output);
  }
  return built;
}

// A synth bundles every handler, and most ship the same side modules (the S3 client beside all
// of them): each is built once per process, from installed packages that do not change under it.
const builtSideModules = new Map<string, Uint8Array>();

function bundleSideModule(
  esbuild: Pick<typeof import('esbuild'), 'buildSync'>,
  options: EsbuildOptions,
): Uint8Array {
  const key = JSON.stringify(options);
  let contents = builtSideModules.get(key);
  if (contents === undefined) {
    const [output] = esbuild.buildSync({ ...options, outfile: 'side-module.mjs', write: false }).outputFiles;
    if (output === undefined) throw new Error(`esbuild wrote no side module for ${key}.`);
    contents = output.contents;
    builtSideModules.set(key, contents);
  }
  return contents;
}

/**
 * `buildSideModulesBeside` with esbuild loaded here (the bench and the tests).
 *
 * @example
 * await buildSideModules(directory, bundleText, resolveProjectPath('lambdas/tools/no-team-tools.ts'));
 */
export async function buildSideModules(
  directory: string,
  bundleText: string,
  toolsModulePath: string,
): Promise<string[]> {
  return buildSideModulesBeside(await import('esbuild'), directory, bundleText, toolsModulePath);
}

/**
 * A handler bundle through esbuild's API: what `npm run build` ships, the construct bundles at
 * synth in a source checkout, and the bench measures (see lib/handler-assets.ts).
 *
 * @example
 * const { outputFiles } = await esbuild.build({ ...createEsbuildOptions(entry, toolsModulePath), write: false });
 *
 * @internal
 */
export function createEsbuildOptions(entryPath: string, toolsModulePath: string): EsbuildOptions {
  const settings = computeHandlerBundleSettings(toolsModulePath);
  return {
    ...createBundleFormatOptions(),
    entryPoints: [entryPath],
    external: [...settings.externalModules],
    alias: { ...settings.aliases },
    // The runbook GET /runbook serves is the one of this build (lambdas/handlers/http/runbook-page.ts).
    define: {
      [RUNBOOK_MARKDOWN_DEFINE]: JSON.stringify(readFileSync(resolveProjectPath('docs/runbook.md'), 'utf8')),
    },
  };
}

/**
 * The esbuild options every handler-like bundle shares (a handler, a team tools module): one
 * minified ES module for Node with `computeBundleFormat`'s target, module fields and shim.
 *
 * @example
 * esbuild.buildSync({ ...createBundleFormatOptions(), entryPoints: [toolsModulePath], external: [], outfile });
 *
 * @internal
 */
export function createBundleFormatOptions(): EsbuildOptions {
  const format = computeBundleFormat();
  return {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: format.target,
    mainFields: [...format.mainFields],
    banner: { js: format.banner },
    minify: true,
    logLevel: 'warning',
  };
}
