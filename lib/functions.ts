import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Grant, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { BuildOptions as EsbuildOptions } from 'esbuild';
import type { EnvironmentVariableName } from '../lambdas/contract/environment.js';
import type { PolicyFloor } from '../lambdas/core/policy/policy-floor.js';
import type { CountersignData } from './data.js';
import { createHandlerCode, type HandlerCodeOptions } from './handler-assets.js';
import { grantHandlerDataPermissions } from './handler-permissions.js';

/** The Lambda handlers, one per file in `lambdas/handlers/`. */
export const HANDLER_NAMES = [
  'prepare',
  'model-turn',
  'await-approval',
  'execute-tools',
  'record-rejection',
  'finish-run',
  'mark-failed',
  'mark-expired',
  'api-runs',
  'api-inbox',
  'api-decision',
  'api-admin',
  'api-generate',
  'api-run-events',
  'report-waiting-runs',
] as const;

/** The name of one handler file (without `.ts`). */
export type HandlerName = (typeof HANDLER_NAMES)[number];

/** Which model backs `model-turn` and `api-generate`. */
export type ModelProvider = 'bedrock' | 'openai-compatible' | 'scripted';

/** An OpenAI-compatible chat completions endpoint and the secret that holds its API key. */
export interface OpenAiCompatibleEndpoint {
  /** Base URL of the endpoint, `https://...`. */
  readonly baseUrl: string;
  /** The secret whose value is the API key; only `model-turn` and `api-generate` may read it. */
  readonly apiKeySecret: ISecret;
}

/** The resolved settings the functions are built with (every default already applied). */
export interface CountersignFunctionsProps {
  readonly data: CountersignData;
  readonly approvalTimeout: Duration;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  readonly modelProvider: ModelProvider;
  readonly bedrockModelId: string;
  readonly openAiCompatible?: OpenAiCompatibleEndpoint;
  /** Absolute path of the team's tools module (`countersign-team-tools`); undefined for none. */
  readonly toolsModulePath?: string;
  /** Where the handler code comes from: the prebuilt folder, or bundling at synth. */
  readonly handlerCode: Omit<HandlerCodeOptions, 'toolsModulePath'>;
  /** Memory per handler, over the defaults of each. */
  readonly memorySize?: Readonly<Partial<Record<HandlerName, number>>>;
  /** Secrets of MCP servers (docs/mcp.md): read by the steps that list and call MCP tools. */
  readonly mcpServerSecrets?: readonly ISecret[];
  readonly skillsMaxBytes: number;
  readonly maxTurns: number;
  /** The resolved policy floor, passed to every function as `COUNTERSIGN_POLICY_FLOOR` (JSON). */
  readonly policyFloor: PolicyFloor;
  /** The `service` of every log line and metric (POWERTOOLS_SERVICE_NAME). */
  readonly serviceName: string;
  /** The level the structured logger writes from (POWERTOOLS_LOG_LEVEL). */
  readonly logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
}

/** Variables of a handler's environment, by the names the Lambdas read. */
type HandlerEnvironment = { [Name in EnvironmentVariableName]?: string };

/** The newest Node.js runtime aws-cdk-lib knows; pinned (not NODEJS_LATEST) so a CDK upgrade is a visible diff. */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

/** The esbuild alias the handlers import team tools through. */
export const TEAM_TOOLS_ALIAS = 'countersign-team-tools';

/** Resolves a path inside this project, independent of the working directory of the CDK app. */
export function resolveProjectPath(relativePath: string): string {
  return fileURLToPath(new URL(`../${relativePath}`, import.meta.url));
}

interface FunctionSizing {
  readonly timeout: Duration;
  readonly memorySize: number;
}

// API handlers stay under the 30 s HTTP API integration limit; model and tool steps get minutes.
const SIZING: Record<HandlerName, FunctionSizing> = {
  prepare: { timeout: Duration.seconds(30), memorySize: 512 },
  'model-turn': { timeout: Duration.minutes(5), memorySize: 1024 },
  'await-approval': { timeout: Duration.minutes(1), memorySize: 1024 },
  'execute-tools': { timeout: Duration.minutes(5), memorySize: 1024 },
  'record-rejection': { timeout: Duration.seconds(30), memorySize: 512 },
  'finish-run': { timeout: Duration.seconds(30), memorySize: 512 },
  'mark-failed': { timeout: Duration.seconds(30), memorySize: 512 },
  'mark-expired': { timeout: Duration.seconds(30), memorySize: 512 },
  'api-runs': { timeout: Duration.seconds(29), memorySize: 1024 },
  'api-inbox': { timeout: Duration.seconds(29), memorySize: 1024 },
  'api-decision': { timeout: Duration.seconds(29), memorySize: 1024 },
  'api-admin': { timeout: Duration.seconds(29), memorySize: 1024 },
  // The model gets 25 s of these (TEXT_GENERATION_TIMEOUT_MILLISECONDS), then the request is a 504.
  'api-generate': { timeout: Duration.seconds(29), memorySize: 1024 },
  // A function URL stream, not an HTTP API integration: it follows a run for 60 s, then ends.
  'api-run-events': { timeout: Duration.seconds(90), memorySize: 1024 },
  // The scheduled probe reads the inbox index only: one query per 100 waiting runs.
  'report-waiting-runs': { timeout: Duration.seconds(60), memorySize: 256 },
};

/** Bedrock geography prefixes of cross-Region inference profile ids (`us.anthropic...`). */
const INFERENCE_PROFILE_PREFIXES = ['us', 'us-gov', 'eu', 'apac', 'jp', 'au', 'ca', 'global'];

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

function toConstructId(name: HandlerName): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/**
 * The Lambda functions of countersign, each with its own role, log group and exactly
 * the permissions its handler needs. Step Functions and API permissions that depend on the
 * state machine are granted by the composing construct.
 *
 * @example
 * const functions = new CountersignFunctions(this, 'Functions', resolvedSettings);
 * functions.get('api-runs').addEnvironment('COUNTERSIGN_STATE_MACHINE_ARN', arn);
 */
export class CountersignFunctions extends Construct {
  /** Every function by handler name. */
  public readonly functions: Readonly<Record<HandlerName, LambdaFunction>>;

  public constructor(scope: Construct, id: string, props: CountersignFunctionsProps) {
    super(scope, id);
    const environment = this.environmentFor(props);
    const created: Partial<Record<HandlerName, LambdaFunction>> = {};
    for (const name of HANDLER_NAMES) {
      created[name] = this.createFunction(name, props, environment);
    }
    this.functions = created as Record<HandlerName, LambdaFunction>;

    grantHandlerDataPermissions(props.data, this.functions);

    const awaitApproval = this.get('await-approval');
    EventBus.fromEventBusName(this, 'DefaultEventBus', 'default').grantPutEventsTo(awaitApproval);
    awaitApproval.addEnvironment('COUNTERSIGN_EVENT_BUS_NAME' satisfies EnvironmentVariableName, 'default');

    // The two functions that call the model: the run's model turn and the completion API.
    for (const caller of [this.get('model-turn'), this.get('api-generate')]) {
      if (props.modelProvider === 'bedrock') this.grantModelInvocation(caller, props.bedrockModelId);
      if (props.modelProvider === 'openai-compatible' && props.openAiCompatible !== undefined) {
        props.openAiCompatible.apiKeySecret.grantRead(caller);
      }
    }
    for (const secret of props.mcpServerSecrets ?? []) {
      for (const name of ['model-turn', 'await-approval', 'execute-tools'] as const)
        secret.grantRead(this.get(name));
    }
  }

  /** The function of one handler. */
  public get(name: HandlerName): LambdaFunction {
    return this.functions[name];
  }

  /** Only the names the Lambdas read compile here: lambdas/contract/environment.ts is the table. */
  private environmentFor(props: CountersignFunctionsProps): HandlerEnvironment {
    const environment: HandlerEnvironment = {
      COUNTERSIGN_TABLE_NAME: props.data.table.tableName,
      COUNTERSIGN_SEALING_KEY_ARN: props.data.sealingKey.keyArn,
      COUNTERSIGN_OVERFLOW_KEY_ARN: props.data.key.keyArn,
      COUNTERSIGN_OVERFLOW_BUCKET: props.data.overflowBucket.bucketName,
      COUNTERSIGN_APPROVAL_TIMEOUT_SECONDS: String(props.approvalTimeout.toSeconds()),
      COUNTERSIGN_MODEL_PROVIDER: props.modelProvider,
      COUNTERSIGN_BEDROCK_MODEL_ID: props.bedrockModelId,
      COUNTERSIGN_SKILLS_MAX_BYTES: String(props.skillsMaxBytes),
      COUNTERSIGN_MAX_TURNS: String(props.maxTurns),
      COUNTERSIGN_POLICY_FLOOR: JSON.stringify(props.policyFloor),
      // Powertools Logger and Metrics read their service name and level from these.
      POWERTOOLS_SERVICE_NAME: props.serviceName,
      POWERTOOLS_LOG_LEVEL: props.logLevel,
    };
    if (props.openAiCompatible !== undefined) {
      environment.COUNTERSIGN_OPENAI_BASE_URL = props.openAiCompatible.baseUrl;
      environment.COUNTERSIGN_OPENAI_SECRET_ARN = props.openAiCompatible.apiKeySecret.secretArn;
    }
    return environment;
  }

  private createFunction(
    name: HandlerName,
    props: CountersignFunctionsProps,
    environment: HandlerEnvironment,
  ): LambdaFunction {
    const constructId = toConstructId(name);
    const logGroup = new LogGroup(this, `${constructId}LogGroup`, {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    // An own role instead of AWSLambdaBasicExecutionRole: logging is granted on this log group only.
    const role = new Role(this, `${constructId}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `countersign ${name} handler`,
    });
    logGroup.grantWrite(role);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which AWS X-Ray does not support on any resource narrower than "*".',
    });

    const sizing = SIZING[name];
    return new LambdaFunction(this, constructId, {
      code: createHandlerCode(name, {
        ...props.handlerCode,
        ...(props.toolsModulePath === undefined ? {} : { toolsModulePath: props.toolsModulePath }),
      }),
      handler: 'index.handler',
      runtime: LAMBDA_RUNTIME,
      architecture: Architecture.ARM_64,
      tracing: Tracing.ACTIVE,
      timeout: sizing.timeout,
      memorySize: props.memorySize?.[name] ?? sizing.memorySize,
      role,
      logGroup,
      environment: { ...environment },
    });
  }

  /**
   * bedrock:InvokeModel (and CountTokens) on the configured model only. An inference profile
   * also needs the foundation model in every Region the profile may route to.
   */
  private grantModelInvocation(grantee: LambdaFunction, modelId: string): void {
    const stack = Stack.of(this);
    const [prefix] = modelId.split('.');
    const isInferenceProfile = prefix !== undefined && INFERENCE_PROFILE_PREFIXES.includes(prefix);
    // The context-window manager asks Bedrock for its own token count, on the foundation model.
    Grant.addToPrincipal({
      grantee,
      actions: ['bedrock:CountTokens'],
      resourceArns: [
        `arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${isInferenceProfile ? modelId.slice(`${prefix}.`.length) : modelId}`,
      ],
    });
    if (!isInferenceProfile) {
      Grant.addToPrincipal({
        grantee,
        actions: ['bedrock:InvokeModel'],
        resourceArns: [`arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${modelId}`],
      });
      return;
    }
    const foundationModelId = modelId.slice(`${prefix}.`.length);
    Grant.addToPrincipal({
      grantee,
      actions: ['bedrock:InvokeModel'],
      resourceArns: [
        `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:inference-profile/${modelId}`,
        `arn:${stack.partition}:bedrock:*::foundation-model/${foundationModelId}`,
      ],
    });
    const role = grantee.role ?? grantee;
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${foundationModelId}]`,
      reason:
        'A Bedrock cross-Region inference profile routes each call to the foundation model in a Region Bedrock picks at call time, so the model ARN must allow any Region; it names one model only.',
    });
  }
}
