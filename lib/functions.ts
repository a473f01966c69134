import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import type { BuildOptions as EsbuildOptions } from 'esbuild';

/** The newest Node.js runtime aws-cdk-lib knows; pinned (not NODEJS_LATEST) so a CDK upgrade is a visible diff. */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

/** The esbuild alias the handlers import team tools through. */
export const TEAM_TOOLS_ALIAS = 'countersign-team-tools';

/** Resolves a path inside this project, independent of the working directory of the CDK app. */
export function resolveProjectPath(relativePath: string): string {
  return fileURLToPath(new URL(`../${relativePath}`, import.meta.url));
}

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

/** A module shipped beside a handler bundle (`HandlerBundleSettings.sideModules`). */
export interface SideModule {
  /** The import path the handler uses: `gpt-tokenizer/encoding/cl100k_base`. */
  readonly importPath: string;
  /** The file esbuild bundles for it. */
  readonly entryPath: string;
  /** Where it goes, relative to the bundle's directory. */
  readonly outputPath: string;
  /** The `package.json` that makes `importPath` resolve to `outputPath`, relative to the bundle's directory. */
  readonly packageJsonPath: string;
  readonly packageJson: string;
  /**
   * Built like a handler (its `require` shim, module-first main fields and these aliases),
   * for a side module with CommonJS dependencies.
   * @default - a plain ES module build
   */
  readonly handlerLike?: { readonly aliases: Readonly<Record<string, string>> };
}

/**
 * The format every bundle shares, handler or team tools module: target, module fields and the
 * `require` shim. Resolves nothing, so a CDK app that bundles only its tools module needs none
 * of the handlers' dependencies installed.
 *
 * @example
 * describeBundleFormat().target; // 'node24'
 */
export function describeBundleFormat(): Pick<HandlerBundleSettings, 'target' | 'mainFields' | 'banner'> {
  return {
    target: LAMBDA_RUNTIME.name.replace(/^nodejs(\d+)\.x$/, 'node$1'),
    mainFields: ['module', 'main'],
    banner: REQUIRE_BANNER,
  };
}

/**
 * The handler bundle settings for a team tools module. The AWS Encryption SDK is a side
 * module (`describeEncryptionSdkSideModule`), kept small without changing what runs:
 * - `@aws-crypto/client-node` ships an ES module build but no `module` field, so esbuild would
 *   take its CommonJS index, which requires every keyring (RSA, hierarchical, caching) and
 *   tree-shakes nothing; the side module's entry is its own ES module build instead.
 * Two aliases, applied to the side module and the handlers alike:
 * - `readable-stream` is the npm copy of Node's stream module for old runtimes; the SDK uses
 *   its `Transform`, `PassThrough`, `pipeline` and `finished`: lib/bundling/readable-stream.ts
 *   gives it Node's built-in ones (and readable-stream's optional `pipeline` callback).
 * - `bn.js`: asn1.js pins bn.js 4 beside the bn.js 5 the SDK itself uses; asn1.js calls only
 *   `new BN(bytes)`, `toArray()` and `toString(10)`, which both majors share, so one copy ships.
 *
 * @example
 * describeHandlerBundle(resolveProjectPath('lambdas/tools/no-team-tools.ts')).aliases;
 */
export function describeHandlerBundle(toolsModulePath: string): HandlerBundleSettings {
  const tokenizer = describeTokenizerSideModule();
  const mcpClient = describeMcpClientSideModules();
  const encryptionSdk = describeEncryptionSdkSideModule();
  const s3Client = describeS3ClientSideModule();
  return {
    ...describeBundleFormat(),
    externalModules: [
      tokenizer.importPath,
      encryptionSdk.importPath,
      ...mcpClient.map((module) => module.importPath),
      s3Client.importPath,
    ],
    sideModules: [tokenizer, encryptionSdk, ...mcpClient, s3Client],
    aliases: {
      [TEAM_TOOLS_ALIAS]: toolsModulePath,
      ...encryptionSdk.handlerLike?.aliases,
      ...NODE_BUILTIN_ALIASES,
    },
  };
}

/**
 * Node built-ins whose ES module import costs a cold start more than `require` does: each
 * bundles a small module that requires it (lib/bundling/node-http.ts says why).
 */
const NODE_BUILTIN_ALIASES: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    ['fs', 'http', 'https', 'process', 'util'].flatMap((name) => {
      const shim = resolveProjectPath(`lib/bundling/node-${name}.ts`);
      return [
        [name, shim],
        [`node:${name}`, shim],
      ];
    }),
  ),
  // An alias covers the paths below its own: `fs/promises` stays the built-in (import and
  // require cost the same there).
  'fs/promises': 'node:fs/promises',
  'node:fs/promises': 'node:fs/promises',
};

/**
 * The AWS Encryption SDK, shipped beside the bundles that seal: blob format 2 never loads it
 * (KMS wraps sealing keys directly), only a format 1 blob or key does. Inside the bundle, even
 * behind a lazy `import()`, its code cost an unsealing handler ~12 ms of init (`npm run bench`).
 */
function describeEncryptionSdkSideModule(): SideModule {
  return {
    importPath: '@aws-crypto/client-node',
    entryPath: resolveEncryptionClientModuleBuild(),
    outputPath: 'node_modules/@aws-crypto/client-node/index.mjs',
    packageJsonPath: 'node_modules/@aws-crypto/client-node/package.json',
    packageJson: JSON.stringify({
      name: '@aws-crypto/client-node',
      type: 'module',
      exports: { '.': './index.mjs' },
    }),
    handlerLike: {
      aliases: {
        'readable-stream': resolveProjectPath('lib/bundling/readable-stream.ts'),
        'bn.js': resolveEncryptionSdkBigNumber(),
      },
    },
  };
}

/**
 * The S3 client of the state overflow store, shipped beside every bundle: only run state over
 * the DynamoDB item limit reaches S3, and the client's code inside a bundle, even behind a lazy
 * `import()`, cost each cold start ~10 ms of parsing (`npm run bench`). Built like a handler
 * (module-first fields, the built-in aliases); it carries its own copy of the SDK core.
 */
function describeS3ClientSideModule(): SideModule {
  const packageJson = requireFromHere.resolve('@aws-sdk/client-s3/package.json');
  const entryPath = join(dirname(packageJson), 'dist-es', 'index.js');
  if (!existsSync(entryPath)) {
    throw new Error(
      `@aws-sdk/client-s3 has no ES module build at ${entryPath}; update describeS3ClientSideModule in lib/functions.ts to the layout of the installed version.`,
    );
  }
  return {
    importPath: '@aws-sdk/client-s3',
    entryPath,
    outputPath: 'node_modules/@aws-sdk/client-s3/index.mjs',
    packageJsonPath: 'node_modules/@aws-sdk/client-s3/package.json',
    packageJson: JSON.stringify({
      name: '@aws-sdk/client-s3',
      type: 'module',
      exports: { '.': './index.mjs' },
    }),
    handlerLike: { aliases: NODE_BUILTIN_ALIASES },
  };
}

/**
 * The MCP SDK's client and streamable HTTP transport, shipped beside the three step bundles
 * that import them lazily (docs/mcp.md). Inside the bundle, a lazy import of the SDK made
 * esbuild defer the initialisation of the zod core it shares with countersign's own schemas,
 * and the bundles failed at load; as a static import the SDK cost every cold start of those
 * steps its evaluation. Each side module bundles its own copy of what the two share: they
 * talk through the transport interface with plain JSON-RPC objects.
 */
function describeMcpClientSideModules(): SideModule[] {
  // The package's exports map `package.json` into dist/cjs; its root is above `dist`.
  const resolved = requireFromHere.resolve('@modelcontextprotocol/sdk/client/index.js');
  const packageRoot = resolved.slice(0, resolved.lastIndexOf(`${sep}dist${sep}`));
  const packageJsonText = JSON.stringify({
    name: '@modelcontextprotocol/sdk',
    type: 'module',
    exports: {
      './client/index.js': './client/index.mjs',
      './client/streamableHttp.js': './client/streamableHttp.mjs',
    },
  });
  return ['index', 'streamableHttp'].map((name) => {
    const entryPath = join(packageRoot, 'dist', 'esm', 'client', `${name}.js`);
    if (!existsSync(entryPath)) {
      throw new Error(
        `@modelcontextprotocol/sdk has no ES module build at ${entryPath}; update describeMcpClientSideModules in lib/functions.ts to the layout of the installed version.`,
      );
    }
    return {
      importPath: `@modelcontextprotocol/sdk/client/${name}.js`,
      entryPath,
      outputPath: `node_modules/@modelcontextprotocol/sdk/client/${name}.mjs`,
      packageJsonPath: 'node_modules/@modelcontextprotocol/sdk/package.json',
      packageJson: packageJsonText,
    };
  });
}

/** The cl100k tokenizer, shipped beside the bundle (its ES module build). */
function describeTokenizerSideModule(): SideModule {
  const packageJson = requireFromHere.resolve('gpt-tokenizer/package.json');
  const entryPath = join(dirname(packageJson), 'esm', 'encoding', 'cl100k_base.js');
  if (!existsSync(entryPath)) {
    throw new Error(
      `gpt-tokenizer has no ES module build at ${entryPath}; update describeTokenizerSideModule in lib/functions.ts to the layout of the installed version.`,
    );
  }
  return {
    importPath: 'gpt-tokenizer/encoding/cl100k_base',
    entryPath,
    outputPath: 'node_modules/gpt-tokenizer/encoding/cl100k_base.mjs',
    packageJsonPath: 'node_modules/gpt-tokenizer/package.json',
    packageJson: JSON.stringify({
      name: 'gpt-tokenizer',
      type: 'module',
      exports: { './encoding/cl100k_base': './encoding/cl100k_base.mjs' },
    }),
  };
}

/**
 * How one side module is bundled (without its `outfile`): a plain ES module build, or built
 * like a handler when it has CommonJS dependencies (`SideModule.handlerLike`).
 *
 * @example
 * esbuild.buildSync({ ...createSideModuleEsbuildOptions(module, settings), outfile });
 *
 * @internal
 */
export function createSideModuleEsbuildOptions(
  module: SideModule,
  settings: HandlerBundleSettings,
): EsbuildOptions {
  return {
    entryPoints: [module.entryPath],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: settings.target,
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
 * Builds the side modules of `describeHandlerBundle` beside a bundle written to `directory`,
 * when the bundle imports them, with the esbuild API (the bench and the tests).
 *
 * @example
 * await buildSideModules(directory, bundleText, resolveProjectPath('lambdas/tools/no-team-tools.ts'));
 */
export async function buildSideModules(
  directory: string,
  bundleText: string,
  toolsModulePath: string,
): Promise<string[]> {
  const settings = describeHandlerBundle(toolsModulePath);
  const { build } = await import('esbuild');
  const { mkdir, writeFile } = await import('node:fs/promises');
  const built: string[] = [];
  for (const module of settings.sideModules) {
    if (!bundleText.includes(module.importPath)) continue;
    const output = join(directory, module.outputPath);
    await mkdir(dirname(output), { recursive: true });
    await writeFile(join(directory, module.packageJsonPath), module.packageJson);
    await build({ ...createSideModuleEsbuildOptions(module, settings), outfile: output });
    built.push(output);
  }
  return built;
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
  const settings = describeHandlerBundle(toolsModulePath);
  return {
    entryPoints: [entryPath],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: settings.target,
    mainFields: [...settings.mainFields],
    banner: { js: settings.banner },
    minify: true,
    logLevel: 'warning',
    external: [...settings.externalModules],
    alias: { ...settings.aliases },
  };
}

const requireFromHere = createRequire(import.meta.url);

function resolveEncryptionClientModuleBuild(): string {
  const packageJson = requireFromHere.resolve('@aws-crypto/client-node/package.json');
  const moduleBuild = join(dirname(packageJson), 'build', 'module', 'src', 'index.js');
  if (!existsSync(moduleBuild)) {
    throw new Error(
      `@aws-crypto/client-node has no ES module build at ${moduleBuild}; update describeHandlerBundle in lib/functions.ts to the layout of the installed version.`,
    );
  }
  return moduleBuild;
}

/** The bn.js the Encryption SDK's serializer resolves (bn.js 5), following its dependency chain. */
function resolveEncryptionSdkBigNumber(): string {
  let resolveFrom = requireFromHere;
  for (const dependency of ['@aws-crypto/client-node', '@aws-crypto/decrypt-node', '@aws-crypto/serialize']) {
    resolveFrom = createRequire(resolveFrom.resolve(`${dependency}/package.json`));
  }
  return resolveFrom.resolve('bn.js');
}
