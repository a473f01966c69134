import { existsSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { ArnFormat, type CfnElement, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct, type IConstruct } from 'constructs';
import type { EnvironmentVariableName } from '../lambdas/contract/environment.js';
import type { CountersignAlarmThresholds } from './alarm-thresholds.js';
import { CountersignApi } from './api.js';
import { CountersignAuth, type ExternalIdentityProvider, validateExternalIdentityProvider } from './auth.js';
import { CountersignData } from './data.js';
import { CountersignEventsEndpoint } from './events-endpoint.js';
import {
  CountersignFunctions,
  type CountersignFunctionsProps,
  HANDLER_NAMES,
  type HandlerName,
  type ModelProvider,
  type OpenAiCompatibleEndpoint,
} from './functions.js';
import { loadEsbuild, PREBUILT_HANDLERS_DIRECTORY, readPrebuiltManifest } from './handler-assets.js';
import {
  applyIdentityGroupGrants,
  type IdentityGroupGrantsProp,
  resolveIdentityGroupGrants,
} from './identity-group-grants.js';
import { applyInboxShardsEnvironment, resolveInboxShards } from './inbox-shards.js';
import {
  applyReservedConcurrency,
  applyRetentionEnvironment,
  type CountersignReservedConcurrency,
  type CountersignRetention,
  type CountersignThrottling,
  overflowExpiration,
  resolveLimits,
} from './limits.js';
import { CountersignObservability } from './observability.js';
import { readPackageVersion } from './package-version.js';
import { type CountersignPolicyFloor, resolvePolicyFloor } from './policy-floor-props.js';
import { invalidProp } from './validation-error.js';
import { CountersignWorkflow } from './workflow.js';

export type { ExternalIdentityProvider } from './auth.js';
export type { HandlerName, ModelProvider, OpenAiCompatibleEndpoint } from './functions.js';
export type {
  CountersignReservedConcurrency,
  CountersignRetention,
  CountersignThrottling,
} from './limits.js';
export type { CountersignPolicyFloor } from './policy-floor-props.js';

/** Properties of the {@link Countersign} construct. */
export interface CountersignProps {
  /**
   * How long a run waits for a human decision before it ends as expired. Between 1 minute and
   * 24 days, in whole seconds: the local runner overflows its timer above about 24.8 days.
   *
   * @default - Duration.days(7)
   */
  readonly approvalTimeout?: Duration;
  /**
   * Retention of every log group (functions, state machine, API access logs).
   *
   * @default - RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * What happens to the table, the KMS key, the buckets and the log groups when they leave the
   * stack. With DESTROY, a non-empty overflow bucket still blocks deletion until emptied.
   *
   * @default - RemovalPolicy.RETAIN: run data outlives the stack.
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Which model provider `model-turn` (runs) and `api-generate` (completion, translation) may call.
   *
   * @default - 'bedrock'
   */
  readonly modelProvider?: ModelProvider;
  /**
   * The Bedrock model or cross-Region inference profile id (used when `modelProvider` is
   * `'bedrock'`); the model-turn and api-generate roles may invoke this model only.
   *
   * @default - 'global.anthropic.claude-sonnet-4-5-20250929-v1:0' (Claude Sonnet 4.5, global inference profile)
   */
  readonly bedrockModelId?: string;
  /**
   * The OpenAI-compatible endpoint; required when `modelProvider` is `'openai-compatible'`.
   *
   * @default - none
   */
  readonly openAiCompatible?: OpenAiCompatibleEndpoint;
  /**
   * Path of a TypeScript or JavaScript module that exports `teamTools: Tool[]` (import
   * `defineTool` and `Tool` from `countersign/tools`). A relative path resolves against the
   * working directory of the CDK app. The module is bundled on its own, with the app's esbuild
   * at synth, into the handlers that offer or run tools, beside their prebuilt code.
   *
   * @default - no team tools: every handler deploys prebuilt, and synth needs no esbuild
   */
  readonly toolsModule?: string;
  /**
   * The Secrets Manager secrets the configurations' MCP servers name as `authSecret`
   * (docs/mcp.md). Only the model turn, the pause and the execution may read them.
   *
   * @default - none (a server with an `authSecret` then fails its runs with AccessDenied)
   */
  readonly mcpServerSecrets?: readonly ISecret[];
  /**
   * Byte budget of the skills block prepended to the first user message (seed 003).
   *
   * @default - 24000
   */
  readonly skillsMaxBytes?: number;
  /**
   * The deployment-wide cap on model turns per run; a configuration may ask for fewer.
   *
   * @default - 50
   */
  readonly maxTurns?: number;
  /**
   * Who may call the API: tokens of this OpenID Connect provider (issuer URL and audiences),
   * checked by the HTTP API's JWT authorizer. Its groups give grants only as
   * `identityGroupGrants` maps them.
   *
   * @default - a Cognito user pool created by the construct (groups `agent_run`, `agent_approve`, `admin`; TOTP MFA required) and one app client
   */
  readonly externalIdentityProvider?: ExternalIdentityProvider;
  /**
   * Which identity-provider groups (the tokens' `cognito:groups` or `groups` claim) give which
   * grants to a signed-in user without a user record. A user record, when there is one, decides
   * alone; and only a user with a record may start runs.
   *
   * @example { 'countersign-approvers': ['agent_approve'], 'platform-admins': ['admin'] }
   * @default - with the construct's user pool, its groups `agent_run`, `agent_approve` and `admin` give the grant they name; with `externalIdentityProvider`, no group gives a grant
   */
  readonly identityGroupGrants?: IdentityGroupGrantsProp;
  /**
   * The level every Lambda logs from (structured JSON lines). DEBUG adds one line per request;
   * no level ever logs a token, a preview, a transcript, a skill body or a tool's exception text.
   *
   * @default - 'INFO'
   */
  readonly logLevel?: CountersignLogLevel;
  /**
   * The `service` of every log line and the `service` dimension of every metric, which keeps two
   * deployments in one account apart on the dashboard and in the alarms.
   *
   * @default - `<stack name>-<construct id>`
   */
  readonly serviceName?: string;
  /**
   * The SNS topic every alarm notifies (and tells when it recovers). See docs/runbook.md.
   *
   * @default - a topic encrypted with its own customer managed key; subscribe to `observability.alarmTopic`
   */
  readonly alarmTopic?: ITopic;
  /**
   * Alarm thresholds, among them how long a run may wait for a decision before an alarm.
   *
   * @default - see ALARM_THRESHOLD_DEFAULTS in lib/alarm-thresholds.ts (24 hours, 5 s p99, 20 %, 300000 bytes)
   */
  readonly alarmThresholds?: CountersignAlarmThresholds;
  /**
   * The approval policy floor every configuration is raised to (four-eyes, four-eyes tools,
   * required approvals, decision gate); a configuration may tighten it, never loosen it.
   * See docs/approvers.md, "Policy".
   *
   * @default - four-eyes per configuration, no four-eyes tools, 1 approval, the `tool` gate
   */
  readonly policyFloor?: CountersignPolicyFloor;
  /**
   * Rate and burst limits of the HTTP API (a throttled client gets 429). See docs/runbook.md, "Limits".
   *
   * @default - { rateLimit: 50, burstLimit: 100 }
   */
  readonly throttling?: CountersignThrottling;
  /**
   * Reserved concurrency per function group; a group set to `undefined` is left unreserved.
   *
   * @default - { api: 5, events: 10, steps: 5, probe: 1 } (per function of the group)
   */
  readonly reservedConcurrency?: CountersignReservedConcurrency;
  /**
   * How long ended runs (transcripts, cards, overflow) and decisions are kept.
   *
   * @default - ended runs 90 days; decisions and the skills audit forever
   */
  readonly retention?: CountersignRetention;
  /**
   * The runbook every alarm description links to (`<runbookUrl>#<alarm name in lower case>`),
   * e.g. your team's copy of docs/runbook.md on your wiki.
   *
   * @default - docs/runbook.md of this package version on unpkg.com
   */
  readonly runbookUrl?: string;
  /**
   * Whether to create the CloudWatch dashboard (about $3 a month). The alarms exist either way.
   *
   * @default true
   */
  readonly dashboard?: boolean;
  /**
   * Cognito threat protection in full function mode on the user pool the construct creates,
   * which needs the Plus feature plan (billed per monthly active user). Without it the pool
   * uses the Essentials plan. Ignored with `externalIdentityProvider`.
   *
   * @default true
   */
  readonly threatProtection?: boolean;
  /**
   * Memory of individual handlers in MB (128 to 10240), over the defaults (256 to 1024 MB by
   * handler; see SIZING in lib/functions.ts). Lambda CPU grows with memory.
   *
   * @default - each handler's default
   */
  readonly memorySize?: Readonly<Partial<Record<HandlerName, number>>>;
  /**
   * Shards per approver group of the inbox index: one shard takes about 1,000 card writes a
   * second (docs/runbook.md). Raise it for a higher pause rate; never lower it on a deployed
   * stack (cards in a dropped shard would leave the inbox).
   *
   * @default 4
   */
  readonly inboxShards?: number;
}

/** The levels of {@link CountersignProps.logLevel}. */
export type CountersignLogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** The defaults of {@link CountersignProps}, in one place for the construct and its tests. */
export const COUNTERSIGN_DEFAULTS = {
  approvalTimeout: Duration.days(7),
  logRetention: RetentionDays.ONE_MONTH,
  removalPolicy: RemovalPolicy.RETAIN,
  modelProvider: 'bedrock' as ModelProvider,
  bedrockModelId: 'global.anthropic.claude-sonnet-4-5-20250929-v1:0',
  skillsMaxBytes: 24_000,
  maxTurns: 50,
  logLevel: 'INFO' as CountersignLogLevel,
} as const;

const MINIMUM_APPROVAL_TIMEOUT_SECONDS = Duration.minutes(1).toSeconds();
// aws-local-stepfunctions waits with setTimeout, which overflows at 2^31 ms (about 24.8 days).
const MAXIMUM_APPROVAL_TIMEOUT_SECONDS = Duration.days(24).toSeconds();
const MAXIMUM_TURNS = 200;
const MAXIMUM_SKILLS_BYTES = 1_000_000;
const MODEL_PROVIDERS: readonly ModelProvider[] = ['bedrock', 'openai-compatible', 'scripted'];
const TOOLS_MODULE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'];
const BEDROCK_MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** The props with every default applied: what the functions are built with, less what the construct adds. */
type ResolvedSettings = Omit<CountersignFunctionsProps, 'data' | 'serviceName' | 'logLevel' | 'handlerCode'>;

// Lambda's memory range, in MB.
const MINIMUM_MEMORY_MB = 128;
const MAXIMUM_MEMORY_MB = 10_240;

/**
 * countersign on AWS: LLM agents run tool loops in a Step Functions workflow, and every write
 * they propose waits for a human to countersign it. Composes the data layer (table, key,
 * overflow bucket), the handler functions, the run workflow and the HTTP API.
 *
 * @example
 * const countersign = new Countersign(this, 'Countersign', {
 *   approvalTimeout: Duration.days(3),
 *   toolsModule: 'src/team-tools.ts',
 * });
 * countersign.grantStartRun(myScheduler);
 */
export class Countersign extends Construct {
  /** The single table of runs, sealed state, skills, pages, grants and audit records. */
  public readonly table: Table;
  /** The data key: the table and the overflow objects at rest (usable through DynamoDB and S3 only). */
  public readonly key: Key;
  /** The sealing key: run state, approval cards and task tokens (only the handlers that unseal may decrypt). */
  public readonly sealingKey: Key;
  /** Sealed run state too large for a DynamoDB item. */
  public readonly overflowBucket: Bucket;
  /** The run workflow, one execution per run (continued as new for long runs). */
  public readonly stateMachine: StateMachine;
  /** The HTTP API of runs, inbox and decisions. */
  public readonly httpApi: HttpApi;
  /** The base URL of the API's default stage. */
  public readonly apiUrl: string;
  /** Every handler function by name. */
  public readonly functions: Readonly<Record<HandlerName, LambdaFunction>>;
  /** The API's authentication: the JWT authorizer and, by default, the Cognito user pool. */
  public readonly auth: CountersignAuth;
  /** GET /runs/{id}/events as server-sent events: a streaming function URL (docs/previews.md). */
  public readonly eventsEndpoint: CountersignEventsEndpoint;

  /** The dashboard, the alarms and their SNS topic. */
  public readonly observability: CountersignObservability;

  private readonly data: CountersignData;

  public constructor(scope: Construct, id: string, props: CountersignProps = {}) {
    super(scope, id);
    const settings = resolveSettings(this, props);
    const observabilitySettings = resolveObservabilitySettings(this, props);
    const runbookUrl = resolveRunbookUrl(this, props.runbookUrl);
    const prebuilt = readPrebuiltManifest(PREBUILT_HANDLERS_DIRECTORY);
    if (prebuilt !== undefined && settings.toolsModulePath !== undefined && loadEsbuild() === undefined) {
      throw invalidProp(
        this,
        `toolsModule ${JSON.stringify(props.toolsModule)} must be bundled at synth, and esbuild is not installed; add it to the CDK app (npm install --save-dev esbuild) or remove toolsModule.`,
      );
    }

    const limits = resolveLimits(this, props);
    const inboxShards = resolveInboxShards(this, props.inboxShards);

    this.data = new CountersignData(this, 'Data', {
      removalPolicy: settings.removalPolicy,
      overflowExpiration: overflowExpiration(limits.retention, settings.approvalTimeout),
    });
    const functions = new CountersignFunctions(this, 'Functions', {
      data: this.data,
      ...settings,
      ...observabilitySettings,
      handlerCode: {
        prebuiltDirectory: PREBUILT_HANDLERS_DIRECTORY,
        ...(prebuilt === undefined ? {} : { prebuilt }),
      },
    });
    const workflow = new CountersignWorkflow(this, 'Workflow', {
      functions,
      approvalTimeout: settings.approvalTimeout,
      logRetention: settings.logRetention,
      removalPolicy: settings.removalPolicy,
    });
    this.auth = new CountersignAuth(this, 'Auth', {
      removalPolicy: settings.removalPolicy,
      ...(props.threatProtection === undefined ? {} : { threatProtection: props.threatProtection }),
      ...(props.externalIdentityProvider === undefined
        ? {}
        : { externalIdentityProvider: props.externalIdentityProvider }),
    });
    const api = new CountersignApi(this, 'Api', {
      functions,
      logRetention: settings.logRetention,
      removalPolicy: settings.removalPolicy,
      authorizer: this.auth.authorizer,
      throttling: limits.throttling,
    });
    applyReservedConcurrency(functions.functions, limits.reservedConcurrency);
    applyRetentionEnvironment(functions.functions, limits.retention);
    applyInboxShardsEnvironment(functions.functions, inboxShards);

    this.table = this.data.table;
    this.key = this.data.key;
    this.sealingKey = this.data.sealingKey;
    this.overflowBucket = this.data.overflowBucket;
    this.stateMachine = workflow.stateMachine;
    this.httpApi = api.httpApi;
    this.apiUrl = api.url;
    this.functions = functions.functions;
    this.observability = new CountersignObservability(this, 'Observability', {
      functions: functions.functions,
      stateMachine: this.stateMachine,
      table: this.table,
      httpApi: this.httpApi,
      serviceName: observabilitySettings.serviceName,
      removalPolicy: settings.removalPolicy,
      runbookUrl,
      ...(props.dashboard === undefined ? {} : { dashboard: props.dashboard }),
      ...(props.alarmTopic === undefined ? {} : { alarmTopic: props.alarmTopic }),
      ...(props.alarmThresholds === undefined ? {} : { alarmThresholds: props.alarmThresholds }),
    });

    const apiRuns = functions.get('api-runs');
    apiRuns.addEnvironment(
      'COUNTERSIGN_STATE_MACHINE_ARN' satisfies EnvironmentVariableName,
      this.stateMachine.stateMachineArn,
    );
    this.grantStartRun(apiRuns);
    this.grantStopRun(apiRuns);
    applyIdentityGroupGrants(
      (['api-runs', 'api-inbox', 'api-decision', 'api-admin', 'api-generate', 'api-run-events'] as const).map(
        (name) => functions.get(name),
      ),
      resolveIdentityGroupGrants({
        scope: this,
        ...(props.identityGroupGrants === undefined
          ? {}
          : { identityGroupGrants: props.identityGroupGrants }),
        usesExternalIdentityProvider: props.externalIdentityProvider !== undefined,
      }),
    );
    this.grantDecision(functions.get('api-decision'));
    // The inbox and the decision end the run of a card that cannot be opened (api-runs already
    // may: it writes the table and stops executions for a cancel; the event stream only reads).
    for (const name of ['api-inbox', 'api-decision'] as const) {
      this.grantEndRun(functions.get(name));
    }

    this.eventsEndpoint = new CountersignEventsEndpoint(this, 'Events', {
      handler: functions.get('api-run-events'),
      issuerUrl: this.auth.issuerUrl,
      // The audiences the HTTP API's authorizer accepts: the external provider's, or the app client.
      audience:
        props.externalIdentityProvider?.audience ??
        (this.auth.userPoolClient ? [this.auth.userPoolClient.userPoolClientId] : []),
    });
  }

  /** Lets `grantee` start run executions (states:StartExecution on this state machine only). */
  public grantStartRun(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['states:StartExecution'],
      resourceArns: [this.stateMachine.stateMachineArn],
    });
  }

  /**
   * Lets `grantee` stop this state machine's executions (states:StopExecution on its executions
   * only): what POST /runs/{id}/cancel needs after it has marked the run cancelled. Private:
   * stopping an execution without that record would leave a run the table calls alive.
   */
  private grantStopRun(grantee: IGrantable): Grant {
    const grant = Grant.addToPrincipal({
      grantee,
      actions: ['states:StopExecution'],
      resourceArns: [
        Stack.of(this).formatArn({
          service: 'states',
          resource: 'execution',
          resourceName: `${this.stateMachine.stateMachineName}:*`,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
    });
    const stateMachineLogicalId = Stack.of(this).getLogicalId(
      this.stateMachine.node.defaultChild as CfnElement,
    );
    // On the grantee's role (its policy holds the statement), or on this construct for a principal that is no construct.
    const principal: unknown = grantee.grantPrincipal;
    Validations.of(Construct.isConstruct(principal) ? principal : this).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<${stateMachineLogicalId}.Name>:*]`,
      reason:
        'Execution ARNs end in a name minted per run at runtime (the run id, or its continuation); the grant covers the executions of this one state machine.',
    });
    return grant;
  }

  /**
   * Lets `grantee` resume or refuse a waiting run with its task token (states:SendTaskSuccess and
   * states:SendTaskFailure). Private: only the decision handler may hold this, because it claims
   * the decision atomically before it uses the token.
   */
  private grantDecision(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['states:SendTaskSuccess', 'states:SendTaskFailure'],
      resourceArns: [this.stateMachine.stateMachineArn],
    });
  }

  /**
   * Lets `grantee` end a run whose approval card cannot be opened: UpdateItem on run
   * partitions only (`RUN#*`: the run record and its card) and StopExecution on this state
   * machine's executions. No task token is involved: such a card's token is never trusted.
   * Private, like the stop grant it includes.
   */
  private grantEndRun(grantee: IGrantable): Grant {
    Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:UpdateItem'],
      resourceArns: [this.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RUN#*'] } },
    });
    // DynamoDB encrypts with the table key itself; the grantee keeps the table-key Decrypt (through
    // DynamoDB) every card reader already holds from its row of the permissions matrix.
    return this.grantStopRun(grantee);
  }

  /** Lets `grantee` read the table (and decrypt it), e.g. for a reporting job. */
  public grantReadData(grantee: IGrantable): Grant {
    return this.data.grantTableRead(grantee);
  }
}

/** Applies the defaults and refuses values that would deploy a broken runtime. */
function resolveSettings(scope: IConstruct, props: CountersignProps): ResolvedSettings {
  const approvalTimeout = props.approvalTimeout ?? COUNTERSIGN_DEFAULTS.approvalTimeout;
  validateApprovalTimeout(scope, approvalTimeout);

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
    ...(props.memorySize === undefined ? {} : { memorySize: validateMemorySize(scope, props.memorySize) }),
  };
}

function validateApprovalTimeout(scope: IConstruct, approvalTimeout: Duration): void {
  let seconds: number;
  try {
    seconds = approvalTimeout.toSeconds({ integral: true });
  } catch {
    throw invalidProp(
      scope,
      `approvalTimeout ${approvalTimeout.toHumanString()} is not a whole number of seconds; use e.g. Duration.hours(12).`,
    );
  }
  if (seconds < MINIMUM_APPROVAL_TIMEOUT_SECONDS || seconds > MAXIMUM_APPROVAL_TIMEOUT_SECONDS) {
    throw invalidProp(
      scope,
      `approvalTimeout ${approvalTimeout.toHumanString()} is out of range; use between Duration.minutes(1) and Duration.days(24) (the local runner cannot wait longer than about 24.8 days).`,
    );
  }
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

/** The log level and the service name of logs and metrics, validated. */
function resolveObservabilitySettings(
  scope: Construct,
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

function resolveRunbookUrl(scope: IConstruct, runbookUrl?: string): string {
  if (runbookUrl === undefined)
    return `https://unpkg.com/countersign@${readPackageVersion()}/docs/runbook.md`;
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
