import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage, type ILocalBundling } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import {
  buildSideModulesBeside,
  createBundleFormatOptions,
  createEsbuildOptions,
  LAMBDA_RUNTIME,
} from './functions.js';
import { type BundledHandlerName, CHANNEL_HANDLER_NAMES, HANDLER_NAMES } from './handler-names.js';
import { resolveProjectPath } from './project-path.js';

/*
 * How the handler code reaches a Lambda. Every handler asset is a folder with `index.mjs` (the
 * handler bundle, built with lib/functions.ts's esbuild settings) and, for the handlers that
 * offer tools, `team-tools.mjs`: the team's tools module, bundled on its own. The handler
 * bundle imports it as a sibling file instead of inlining it, so a package can ship every
 * handler prebuilt and a team's tools are the only code bundled at the team's synth.
 */

/** The file every handler asset runs (`index.handler`). */
const HANDLER_FILE = 'index.mjs';
/** The sibling file the handler bundles import `countersign-team-tools` from. */
const TEAM_TOOLS_FILE = 'team-tools.mjs';
/** Lists the prebuilt handlers and which of them import the team tools. */
export const MANIFEST_FILE = 'manifest.json';

const TEAM_TOOLS_IMPORT = `./${TEAM_TOOLS_FILE}`;
const DEFAULT_TOOLS_MODULE = 'lambdas/tools/no-team-tools.ts';

/** What `npm run build` writes beside the handler folders. */
export interface HandlerAssetManifest {
  /** The Lambda runtime the bundles target (`nodejs24.x`). */
  readonly runtime: string;
  /** Every handler (the channels' too), and whether its bundle imports the team tools file. */
  readonly handlers: Readonly<Record<BundledHandlerName, { readonly importsTeamTools: boolean }>>;
}

/**
 * The folder of prebuilt handler assets: `dist/assets/handlers/` beside the compiled construct
 * (`dist/lib/`). A source checkout has none and bundles at synth instead.
 *
 * @example
 * readPrebuiltManifest(PREBUILT_HANDLERS_DIRECTORY)?.handlers['model-turn'].importsTeamTools;
 */
export const PREBUILT_HANDLERS_DIRECTORY = fileURLToPath(new URL('../assets/handlers', import.meta.url));

/** The manifest of a prebuilt handler folder, or undefined where none was built. */
export function readPrebuiltManifest(directory: string): HandlerAssetManifest | undefined {
  const path = join(directory, MANIFEST_FILE);
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as HandlerAssetManifest;
}

type Esbuild = typeof import('esbuild');

/**
 * esbuild, loaded only when something must be bundled: from this package's own resolution
 * (its optional peer dependency), else from the CDK app's working directory.
 *
 * @example
 * const esbuild = loadEsbuild();
 * if (esbuild === undefined) throw new Error('install esbuild');
 *
 * @internal
 */
export function loadEsbuild(): Esbuild | undefined {
  for (const base of [import.meta.url, join(process.cwd(), 'package.json')]) {
    try {
      return createRequire(base)('esbuild') as Esbuild;
    } catch {
      // Not resolvable from here; try the next place.
    }
  }
  return undefined;
}

/**
 * Bundles one handler into `outputDirectory` as the Lambda runs it: `index.mjs` from
 * lambdas/handlers/<name>.ts with lib/functions.ts's settings, and `team-tools.mjs` from the
 * tools module when the handler imports it. Returns whether it does.
 *
 * @example
 * buildHandlerAsset(esbuild, 'model-turn', 'dist/assets/handlers/model-turn', toolsModulePath);
 *
 * @internal
 */
export function buildHandlerAsset(
  esbuild: Esbuild,
  name: BundledHandlerName,
  outputDirectory: string,
  toolsModulePath: string,
): boolean {
  mkdirSync(outputDirectory, { recursive: true });
  const entry = resolveProjectPath(`lambdas/handlers/${name}.ts`);
  // An unused import of an external file stays in a bundle, so whether a handler reads the team
  // tools is asked of a build that inlines the empty default module (no side effects): it then
  // contributes bytes or not. Without them, that build is the handler's bundle.
  const probeModulePath = resolveProjectPath(DEFAULT_TOOLS_MODULE);
  const inlined = esbuild.buildSync({
    ...createEsbuildOptions(entry, probeModulePath),
    outfile: join(outputDirectory, HANDLER_FILE),
    metafile: true,
    write: false,
  });
  const importsTeamTools = Object.values(inlined.metafile.outputs).some(
    (output) => (output.inputs[relative(process.cwd(), probeModulePath)]?.bytesInOutput ?? 0) > 0,
  );
  if (!importsTeamTools) {
    for (const file of inlined.outputFiles) writeFileSync(file.path, file.contents);
  } else {
    const handlerOptions = createEsbuildOptions(entry, TEAM_TOOLS_IMPORT);
    esbuild.buildSync({
      ...handlerOptions,
      external: [...(handlerOptions.external ?? []), TEAM_TOOLS_IMPORT],
      outfile: join(outputDirectory, HANDLER_FILE),
    });
    bundleTeamTools(esbuild, toolsModulePath, outputDirectory);
  }
  // The side modules of lib/side-modules.ts (the tokenizer, the Encryption SDK, the MCP client, the S3 client).
  const bundleText = readFileSync(join(outputDirectory, HANDLER_FILE), 'utf8');
  buildSideModulesBeside(esbuild, outputDirectory, bundleText, probeModulePath);
  return importsTeamTools;
}

/** Bundles a team tools module into `outputDirectory/team-tools.mjs`: the handler bundles' format, target and `require` shim, so it loads beside them; nothing left to the runtime, so a team's AWS SDK calls are bundled too. */
function bundleTeamTools(esbuild: Esbuild, toolsModulePath: string, outputDirectory: string): void {
  esbuild.buildSync({
    ...createBundleFormatOptions(),
    external: [],
    entryPoints: [toolsModulePath],
    outfile: join(outputDirectory, TEAM_TOOLS_FILE),
  });
}

/**
 * Builds every handler asset into `directory` with its manifest: what `npm run build` ships.
 *
 * @example
 * buildPrebuiltHandlers(esbuild, 'dist/assets/handlers');
 *
 * @internal
 */
export function buildPrebuiltHandlers(esbuild: Esbuild, directory: string): HandlerAssetManifest {
  const toolsModulePath = resolveProjectPath(DEFAULT_TOOLS_MODULE);
  const handlers = {} as Record<BundledHandlerName, { importsTeamTools: boolean }>;
  for (const name of [...HANDLER_NAMES, ...CHANNEL_HANDLER_NAMES]) {
    handlers[name] = {
      importsTeamTools: buildHandlerAsset(esbuild, name, join(directory, name), toolsModulePath),
    };
  }
  const manifest: HandlerAssetManifest = { runtime: LAMBDA_RUNTIME.name, handlers };
  writeFileSync(join(directory, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** Where the code of the handlers comes from, decided once per construct. */
export interface HandlerCodeOptions {
  /** The prebuilt folder's manifest; undefined in a source checkout. */
  readonly prebuilt?: HandlerAssetManifest;
  /** The folder the manifest was read from. */
  readonly prebuiltDirectory: string;
  /** Absolute path of the team's tools module; undefined for none. */
  readonly toolsModulePath?: string;
}

const NO_DOCKER_IMAGE = DockerImage.fromRegistry('countersign-bundles-locally-with-esbuild');

/**
 * The Lambda code of one handler:
 * - prebuilt, and no team tools in it: the prebuilt folder as it is (no esbuild, no Docker);
 * - prebuilt, with a team tools module it imports: the prebuilt bundle plus the team's module,
 *   bundled by the app's esbuild at synth;
 * - a source checkout: the handler and the tools module, bundled by esbuild at synth.
 * Bundling at synth is local only and is skipped where the app skips bundling.
 *
 * @example
 * createHandlerCode('model-turn', { prebuilt, prebuiltDirectory, toolsModulePath });
 */
export function createHandlerCode(name: BundledHandlerName, options: HandlerCodeOptions): Code {
  const prebuiltFolder = join(options.prebuiltDirectory, name);
  if (options.prebuilt !== undefined) {
    const importsTeamTools = options.prebuilt.handlers[name]?.importsTeamTools === true;
    if (options.toolsModulePath === undefined || !importsTeamTools) return Code.fromAsset(prebuiltFolder);
    return Code.fromAsset(prebuiltFolder, {
      assetHashType: AssetHashType.OUTPUT,
      bundling: {
        image: NO_DOCKER_IMAGE,
        local: new LocalHandlerBundling(name, options.toolsModulePath, prebuiltFolder),
      },
    });
  }
  return Code.fromAsset(resolveProjectPath('lambdas/handlers'), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: NO_DOCKER_IMAGE,
      local: new LocalHandlerBundling(
        name,
        options.toolsModulePath ?? resolveProjectPath(DEFAULT_TOOLS_MODULE),
      ),
    },
  });
}

/**
 * Bundling at synth with the app's esbuild. Its fields are data on purpose: the CDK caches a
 * staged asset under a key computed from the bundling options' JSON, and a function would
 * serialize to nothing, handing every handler the first one's bundle.
 */
class LocalHandlerBundling implements ILocalBundling {
  public constructor(
    private readonly handlerName: BundledHandlerName,
    private readonly toolsModulePath: string,
    /** The prebuilt handler folder to add the team tools to; undefined to bundle from source. */
    private readonly prebuiltFolder?: string,
  ) {}

  public tryBundle(outputDirectory: string): boolean {
    const esbuild = requireEsbuild();
    if (this.prebuiltFolder === undefined) {
      buildHandlerAsset(esbuild, this.handlerName, outputDirectory, this.toolsModulePath);
      return true;
    }
    // The prebuilt bundle and its side modules as shipped; only the team tools are bundled here.
    cpSync(this.prebuiltFolder, outputDirectory, {
      recursive: true,
      filter: (source) => !source.endsWith(TEAM_TOOLS_FILE),
    });
    bundleTeamTools(esbuild, this.toolsModulePath, outputDirectory);
    return true;
  }
}

function requireEsbuild(): Esbuild {
  const esbuild = loadEsbuild();
  if (esbuild === undefined) {
    // The construct checks this before synth when it can; this is the last line.
    throw new Error(
      'countersign: bundling a toolsModule needs esbuild in the CDK app (npm install --save-dev esbuild).',
    );
  }
  return esbuild;
}
