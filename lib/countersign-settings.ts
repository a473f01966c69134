import { existsSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';
import {
  type ModelPrice,
  type ModelPrices,
  modelPricesSchema,
} from '../lambdas/core/generation/model-prices.js';
import { formatSchemaIssues } from '../lambdas/core/schema-messages.js';
import { validateExternalIdentityProvider } from './auth.js';
import type { CountersignFunctionsProps } from './countersign-functions.js';
import {
  COUNTERSIGN_DEFAULTS,
  type CountersignLogLevel,
  type CountersignProps,
} from './countersign-props.js';
import { validateDurationProp } from './duration-prop.js';
import { HANDLER_NAMES, type HandlerName } from './handler-names.js';
import type { ModelProvider, OpenAiCompatibleEndpoint } from './model-permissions.js';
import { resolvePolicyFloor } from './policy-floor-props.js';
import { resolveQuotas } from './quota-props.js';
import { invalidProp } from './validation-error.js';

const MINIMUM_APPROVAL_TIMEOUT_SECONDS = Duration.minutes(1).toSeconds();
// aws-local-stepfunctions waits with setTimeout, which overflows at 2^31 ms (about 24.8 days).
const MAXIMUM_APPROVAL_TIMEOUT_SECONDS = Duration.days(24).toSeconds();
const MAXIMUM_TURNS = 200;
const MAXIMUM_SKILLS_BYTES = 1_000_000;
const MODEL_PROVIDERS: readonly ModelProvider[] = ['bedrock', 'openai-compatible', 'scripted'];
const TOOLS_MODULE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'];
const BEDROCK_MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** The props with every default applied: what the functions are built with, less what the construct adds. */
export type ResolvedSettings = Omit<
  CountersignFunctionsProps,
  'data' | 'serviceName' | 'logLevel' | 'handlerCode' | 'inboxShards' | 'retention' | 'mcpAllowedHosts'
>;

// Lambda's memory range, in MB.
const MINIMUM_MEMORY_MB = 128;
const MAXIMUM_MEMORY_MB = 10_240;

/**
 * Applies the defaults and refuses values that would deploy a broken runtime.
 *
 * @example
 * const settings = resolveSettings(this, props); // settings.maxTurns === 50 when props.maxTurns is unset
 */
export function resolveSettings(scope: IConstruct, props: CountersignProps): ResolvedSettings {
  const approvalTimeout = props.approvalTimeout ?? COUNTERSIGN_DEFAULTS.approvalTimeout;
  validateDurationProp(scope, 'approvalTimeout', approvalTimeout, {
    unit: 'seconds',
    minimum: MINIMUM_APPROVAL_TIMEOUT_SECONDS,
    maximum: MAXIMUM_APPROVAL_TIMEOUT_SECONDS,
    example: 'Duration.hours(12)',
    range:
      'between Duration.minutes(1) and Duration.days(24) (the local runner cannot wait longer than about 24.8 days)',
  });

  const logRetention = props.logRetention ?? COUNTERSIGN_DEFAULTS.logRetention;
  if (!Object.values(RetentionDays).includes(logRetention)) {
    throw invalidProp(
      scope,
      `logRetention ${JSON.stringify(logRetention)} is not a RetentionDays value; use e.g. RetentionDays.ONE_MONTH.`,
    );
  }

  const removalPolicy = props.removalPolicy ?? COUNTERSIGN_DEFAULTS.removalPolicy;
  if (!Object.values(RemovalPolicy).includes(removalPolicy)) {
    throw invalidProp(
      scope,
      `removalPolicy ${JSON.stringify(removalPolicy)} is not a RemovalPolicy value; use RemovalPolicy.RETAIN or RemovalPolicy.DESTROY.`,
    );
  }

  const modelProvider = props.modelProvider ?? COUNTERSIGN_DEFAULTS.modelProvider;
  if (!MODEL_PROVIDERS.includes(modelProvider)) {
    throw invalidProp(
      scope,
      `modelProvider ${JSON.stringify(modelProvider)} is not supported; use one of ${MODEL_PROVIDERS.map((provider) => `'${provider}'`).join(', ')}.`,
    );
  }

  const bedrockModelId = props.bedrockModelId ?? COUNTERSIGN_DEFAULTS.bedrockModelId;
  if (!BEDROCK_MODEL_ID_PATTERN.test(bedrockModelId)) {
    throw invalidProp(
      scope,
      `bedrockModelId ${JSON.stringify(bedrockModelId)} is not a Bedrock model id; use an id such as 'anthropic.claude-3-5-haiku-20241022-v1:0' or an inference profile id such as 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'.`,
    );
  }

  validateOpenAiCompatible(scope, modelProvider, props.openAiCompatible);
  if (props.externalIdentityProvider !== undefined) {
    validateExternalIdentityProvider(scope, props.externalIdentityProvider);
  }

  const skillsMaxBytes = props.skillsMaxBytes ?? COUNTERSIGN_DEFAULTS.skillsMaxBytes;
  if (!Number.isInteger(skillsMaxBytes) || skillsMaxBytes < 1 || skillsMaxBytes > MAXIMUM_SKILLS_BYTES) {
    throw invalidProp(
      scope,
      `skillsMaxBytes ${JSON.stringify(skillsMaxBytes)} is invalid; use a whole number of bytes between 1 and ${MAXIMUM_SKILLS_BYTES} (default ${COUNTERSIGN_DEFAULTS.skillsMaxBytes}).`,
    );
  }

  const maxTurns = props.maxTurns ?? COUNTERSIGN_DEFAULTS.maxTurns;
  if (!Number.isInteger(maxTurns) || maxTurns < 1 || maxTurns > MAXIMUM_TURNS) {
    throw invalidProp(
      scope,
      `maxTurns ${JSON.stringify(maxTurns)} is invalid; use a whole number between 1 and ${MAXIMUM_TURNS} (default ${COUNTERSIGN_DEFAULTS.maxTurns}).`,
    );
  }

  return {
    approvalTimeout,
    logRetention,
    removalPolicy,
    modelProvider,
    bedrockModelId,
    ...(props.openAiCompatible === undefined ? {} : { openAiCompatible: props.openAiCompatible }),
    ...(props.toolsModule === undefined
      ? {}
      : { toolsModulePath: resolveToolsModule(scope, props.toolsModule) }),
    mcpServerSecrets: props.mcpServerSecrets ?? [],
    skillsMaxBytes,
    maxTurns,
    policyFloor: resolvePolicyFloor(scope, props.policyFloor),
    principalQuotas: resolveQuotas(scope, props.quotas),
    ...(props.memorySize === undefined ? {} : { memorySize: validateMemorySize(scope, props.memorySize) }),
    ...(props.modelPrices === undefined
      ? {}
      : { modelPrices: validateModelPrices(scope, props.modelPrices) }),
  };
}

/** The price table as the Lambdas read it (lambdas/contract/environment.ts), or a ValidationError naming the entry. */
function validateModelPrices(
  scope: IConstruct,
  modelPrices: Readonly<Record<string, ModelPrice>>,
): ModelPrices {
  const parsed = modelPricesSchema.safeParse(modelPrices);
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  throw invalidProp(
    scope,
    `modelPrices.${issue?.path.map(String).join('.') ?? ''} is invalid (${formatSchemaIssues(parsed.error.issues.slice(0, 1))}); give each model id { inputPerMillionTokens, outputPerMillionTokens } in US dollars, e.g. { 'my-model': { inputPerMillionTokens: 3, outputPerMillionTokens: 15 } }.`,
  );
}

function validateOpenAiCompatible(
  scope: IConstruct,
  modelProvider: ModelProvider,
  endpoint?: OpenAiCompatibleEndpoint,
): void {
  if (modelProvider === 'openai-compatible' && endpoint === undefined) {
    throw invalidProp(
      scope,
      "modelProvider 'openai-compatible' needs openAiCompatible: { baseUrl, apiKeySecret }; set it or choose modelProvider 'bedrock'.",
    );
  }
  if (endpoint === undefined) return;
  if (modelProvider !== 'openai-compatible') {
    throw invalidProp(
      scope,
      `openAiCompatible is set but modelProvider is '${modelProvider}'; set modelProvider: 'openai-compatible' or remove openAiCompatible.`,
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(endpoint.baseUrl);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'https:') {
    // The API key travels in a header: never over plain HTTP.
    throw invalidProp(
      scope,
      `openAiCompatible.baseUrl ${JSON.stringify(endpoint.baseUrl)} is not an https URL; use e.g. 'https://api.example.com/v1'.`,
    );
  }
}

function resolveToolsModule(scope: IConstruct, toolsModule: string): string {
  const path = resolve(toolsModule);
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw invalidProp(
      scope,
      `toolsModule ${JSON.stringify(toolsModule)} does not exist (resolved to ${JSON.stringify(path)}); give the path of a module exporting teamTools, relative to the CDK app's working directory.`,
    );
  }
  if (!TOOLS_MODULE_EXTENSIONS.includes(extname(path))) {
    throw invalidProp(
      scope,
      `toolsModule ${JSON.stringify(toolsModule)} is not a TypeScript or JavaScript module; use a ${TOOLS_MODULE_EXTENSIONS.join(', ')} file.`,
    );
  }
  return path;
}

const LOG_LEVELS: readonly CountersignLogLevel[] = ['DEBUG', 'INFO', 'WARN', 'ERROR'];
const SERVICE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * The log level and the service name of logs and metrics, validated.
 *
 * @example
 * resolveObservabilitySettings(this, {}); // { logLevel: 'INFO', serviceName: '<stack name>-<construct id>' }
 */
export function resolveObservabilitySettings(
  scope: IConstruct,
  props: CountersignProps,
): { logLevel: CountersignLogLevel; serviceName: string } {
  const logLevel = props.logLevel ?? COUNTERSIGN_DEFAULTS.logLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw invalidProp(
      scope,
      `logLevel ${JSON.stringify(logLevel)} is not supported; use one of ${LOG_LEVELS.map((level) => `'${level}'`).join(', ')}.`,
    );
  }
  const stackName = Stack.of(scope).stackName;
  const defaultName = Token.isUnresolved(stackName) ? scope.node.id : `${stackName}-${scope.node.id}`;
  const serviceName = props.serviceName ?? defaultName.replace(/[^A-Za-z0-9._-]/g, '-');
  if (!SERVICE_NAME_PATTERN.test(serviceName)) {
    throw invalidProp(
      scope,
      `serviceName ${JSON.stringify(serviceName)} is invalid; use 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit.`,
    );
  }
  return { logLevel, serviceName };
}

function validateMemorySize(
  scope: IConstruct,
  memorySize: Readonly<Partial<Record<HandlerName, number>>>,
): Readonly<Partial<Record<HandlerName, number>>> {
  for (const [name, megabytes] of Object.entries(memorySize)) {
    if (!(HANDLER_NAMES as readonly string[]).includes(name)) {
      throw invalidProp(
        scope,
        `memorySize names ${JSON.stringify(name)}, which is not a handler; use one of ${HANDLER_NAMES.join(', ')}.`,
      );
    }
    if (!Number.isInteger(megabytes) || megabytes < MINIMUM_MEMORY_MB || megabytes > MAXIMUM_MEMORY_MB) {
      throw invalidProp(
        scope,
        `memorySize.${name} ${JSON.stringify(megabytes)} is invalid; use whole MB from ${MINIMUM_MEMORY_MB} to ${MAXIMUM_MEMORY_MB}.`,
      );
    }
  }
  return memorySize;
}

/**
 * The runbook alarm descriptions link to: the prop, an https URL without a fragment, or the
 * deployment's own copy, which the API serves (`servedAt`, GET /runbook).
 *
 * @example
 * resolveRunbookUrl(this, 'https://wiki.example.com/countersign/runbook', `${api.url}runbook`);
 */
export function resolveRunbookUrl(
  scope: IConstruct,
  runbookUrl: string | undefined,
  servedAt: string,
): string {
  if (runbookUrl === undefined) return servedAt;
  let url: URL | undefined;
  try {
    url = new URL(runbookUrl);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'https:' || url.hash !== '') {
    throw invalidProp(
      scope,
      `runbookUrl ${JSON.stringify(runbookUrl)} is not an https URL without a fragment; use e.g. 'https://wiki.example.com/countersign/runbook' (each alarm appends #<alarm name>).`,
    );
  }
  return runbookUrl;
}
