import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { resolveProjectPath } from './project-path.js';

// The modules shipped beside a handler bundle instead of inside it, each with why; which
// bundles import them and how a bundle is built are lib/functions.ts'.

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
  /**
   * Served to browsers, never imported by the handler: built for the browser platform. The
   * handler finds it through Node's resolution and reads its bytes.
   * @default false
   */
  readonly servedToBrowsers?: boolean;
}

/**
 * Node built-ins whose ES module import costs a cold start more than `require` does: each
 * bundles a small module that requires it (lib/bundling/node-http.ts says why).
 */
export const NODE_BUILTIN_ALIASES: Readonly<Record<string, string>> = {
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
 * The aliases the Encryption SDK's code needs wherever it is bundled, in its side module and in
 * the handlers (lib/functions.ts, `computeHandlerBundleSettings`, says why each).
 */
export function computeEncryptionSdkAliases(): Readonly<Record<string, string>> {
  return {
    'readable-stream': resolveProjectPath('lib/bundling/readable-stream.ts'),
    'bn.js': resolveEncryptionSdkBigNumber(),
    ...NODE_BUILTIN_ALIASES,
  };
}

/**
 * The AWS Encryption SDK, shipped beside the bundles that seal or unseal and loaded on their
 * first seal or unseal: inside the bundle, even behind a lazy `import()`, its code cost an
 * unsealing handler ~12 ms of init (`npm run bench`). Built like a handler, with the built-ins
 * required (importing `http` and `https` made its first load ~30 ms dearer), from the part of
 * the SDK the sealer calls (lib/bundling/encryption-sdk.ts) and without the KMS keyring's
 * default client: the handlers hand the keyring their own (lambdas/adapters/kms-key-wrapping.ts),
 * so the side module carries no copy of the AWS SDK core. 578 KB became 160 KB, and its first
 * load with the first KMS call about half as dear (README, Benchmark, first request).
 */
export function computeEncryptionSdkSideModule(): SideModule {
  return {
    importPath: '@aws-crypto/client-node',
    entryPath: resolveProjectPath('lib/bundling/encryption-sdk.ts'),
    outputPath: 'node_modules/@aws-crypto/client-node/index.mjs',
    packageJsonPath: 'node_modules/@aws-crypto/client-node/package.json',
    packageJson: JSON.stringify({
      name: '@aws-crypto/client-node',
      type: 'module',
      exports: { '.': './index.mjs' },
    }),
    handlerLike: {
      aliases: {
        ...computeEncryptionSdkAliases(),
        '@aws-sdk/client-kms': resolveProjectPath('lib/bundling/no-default-kms-client.ts'),
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
export function computeS3ClientSideModule(): SideModule {
  const packageJson = requireFromHere.resolve('@aws-sdk/client-s3/package.json');
  const entryPath = join(dirname(packageJson), 'dist-es', 'index.js');
  if (!existsSync(entryPath)) {
    throw new Error(
      `@aws-sdk/client-s3 has no ES module build at ${entryPath}; update computeS3ClientSideModule in lib/side-modules.ts to the layout of the installed version.`,
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
export function computeMcpClientSideModules(): SideModule[] {
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
        `@modelcontextprotocol/sdk has no ES module build at ${entryPath}; update computeMcpClientSideModules in lib/side-modules.ts to the layout of the installed version.`,
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

/**
 * The inbox page's OAuth client library (oauth4webapi), shipped beside the inbox bundle and
 * served to the page (GET /assets/oauth-client.js): the published ES module, minified for the
 * browser. The handler only reads it (lambdas/handlers/http/sign-in-library.ts), so it costs the
 * inbox function nothing at cold start.
 */
export function computeSignInLibrarySideModule(): SideModule {
  const entryPath = requireFromHere.resolve('oauth4webapi');
  return {
    importPath: 'oauth4webapi',
    entryPath,
    outputPath: 'node_modules/oauth4webapi/index.mjs',
    packageJsonPath: 'node_modules/oauth4webapi/package.json',
    packageJson: JSON.stringify({ name: 'oauth4webapi', type: 'module', exports: { '.': './index.mjs' } }),
    servedToBrowsers: true,
  };
}

/** The cl100k tokenizer, shipped beside the bundle (its ES module build). */
export function computeTokenizerSideModule(): SideModule {
  const packageJson = requireFromHere.resolve('gpt-tokenizer/package.json');
  const entryPath = join(dirname(packageJson), 'esm', 'encoding', 'cl100k_base.js');
  if (!existsSync(entryPath)) {
    throw new Error(
      `gpt-tokenizer has no ES module build at ${entryPath}; update computeTokenizerSideModule in lib/side-modules.ts to the layout of the installed version.`,
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

const requireFromHere = createRequire(import.meta.url);

/** The bn.js the Encryption SDK's serializer resolves (bn.js 5), following its dependency chain. */
function resolveEncryptionSdkBigNumber(): string {
  let resolveFrom = requireFromHere;
  for (const dependency of ['@aws-crypto/client-node', '@aws-crypto/decrypt-node', '@aws-crypto/serialize']) {
    resolveFrom = createRequire(resolveFrom.resolve(`${dependency}/package.json`));
  }
  return resolveFrom.resolve('bn.js');
}
