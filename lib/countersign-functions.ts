import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Validations } from 'aws-cdk-lib';
import { EventBus, type IEventBus } from 'aws-cdk-lib/aws-events';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Function as LambdaFunction, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { EnvironmentVariableName } from '../lambdas/contract/environment.js';
import type { ModelPrices } from '../lambdas/core/generation/model-prices.js';
import type { PolicyFloor } from '../lambdas/core/policy/policy-floor.js';
import type { PrincipalQuotas } from '../lambdas/core/quotas/principal-quotas.js';
import type { CountersignData } from './data.js';
import { CountersignEscalationSchedules } from './escalation-schedules.js';
import { LAMBDA_RUNTIME } from './functions.js';
import { createHandlerCode, type HandlerCodeOptions } from './handler-assets.js';
import {
  type BundledHandlerName,
  type ChannelHandlerName,
  HANDLER_NAMES,
  type HandlerName,
} from './handler-names.js';
import { grantHandlerDataPermissions } from './handler-permissions.js';
import { CHANNEL_HANDLER_SIZING, HANDLER_SIZING } from './handler-sizing.js';
import type { ResolvedLimits } from './limits.js';
import { MCP_CONNECTING_HANDLERS, MCP_HOST_CHECKING_HANDLERS } from './mcp-allowed-hosts.js';
import {
  grantModelAccess,
  MODEL_CALLING_HANDLERS,
  type ModelProvider,
  type OpenAiCompatibleEndpoint,
} from './model-permissions.js';

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
  /** The resolved per-principal quotas, passed to every function as `COUNTERSIGN_PRINCIPAL_QUOTAS` (JSON). */
  readonly principalQuotas: PrincipalQuotas;
  /** The `service` of every log line and metric (POWERTOOLS_SERVICE_NAME). */
  readonly serviceName: string;
  /** The level the structured logger writes from (POWERTOOLS_LOG_LEVEL). */
  readonly logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** Shards of the inbox index per route; every function writes or reads it (COUNTERSIGN_INBOX_SHARDS). */
  readonly inboxShards: number;
  /** What the run repository stamps on what it writes (COUNTERSIGN_*_RETENTION_SECONDS). */
  readonly retention: ResolvedLimits['retention'];
  /** Normalised MCP hosts, for the functions that check MCP server URLs (COUNTERSIGN_MCP_ALLOWED_HOSTS). */
  readonly mcpAllowedHosts: readonly string[];
  /** The model price table, for the functions that call the model (COUNTERSIGN_MODEL_PRICES). */
  readonly modelPrices?: ModelPrices;
}

/** Variables of a handler's environment, by the names the Lambdas read. */
export type HandlerEnvironment = { [Name in EnvironmentVariableName]?: string };

/**
 * The handlers that may close a card (a decision, a cancel, an expiry, a failure, a card reopened,
 * a card the reader refuses, a decision the probe redelivers), and so announce it: `Card Closed`
 * on the default bus.
 */
export const CARD_CLOSING_HANDLERS = [
  'await-approval',
  'execute-tools',
  'mark-failed',
  'mark-expired',
  'api-runs',
  'api-inbox',
  'api-decision',
  'api-run-events',
  'report-waiting-runs',
] as const satisfies readonly HandlerName[];

function toConstructId(name: BundledHandlerName): string {
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
  /** The default bus, where `Run Awaiting Approval` and `Card Closed` go. */
  public readonly eventBus: IEventBus;

  private readonly props: CountersignFunctionsProps;
  private readonly environment: HandlerEnvironment;

  public constructor(scope: Construct, id: string, props: CountersignFunctionsProps) {
    super(scope, id);
    this.props = props;
    this.environment = this.environmentFor(props);
    const created: Partial<Record<HandlerName, LambdaFunction>> = {};
    for (const name of HANDLER_NAMES) {
      created[name] = this.createFunction(
        name,
        HANDLER_SIZING[name].timeout,
        props.memorySize?.[name] ?? HANDLER_SIZING[name].memorySize,
      );
    }
    this.functions = created as Record<HandlerName, LambdaFunction>;

    grantHandlerDataPermissions(props.data, this.functions);
    // Only the functions that sign receipt entries are told the key (and slack-interactions, lib/channels.ts).
    this.get('api-decision').addEnvironment(
      'COUNTERSIGN_RECEIPT_KEY_ARN' satisfies EnvironmentVariableName,
      props.data.receiptSigningKey.keyArn,
    );

    // The events of countersign: a run waits (the pause), a card closes (wherever it closes: the
    // channels update their messages), an unanswered card escalates, an external run is answered.
    this.eventBus = EventBus.fromEventBusName(this, 'DefaultEventBus', 'default');
    for (const name of CARD_CLOSING_HANDLERS) this.grantAnnounce(this.get(name));
    this.grantAnnounce(this.get('escalate-card'));
    this.grantAnnounce(this.get('record-external-decision'));
    new CountersignEscalationSchedules(this, 'Escalations', {
      pausing: this.get('await-approval'),
      escalate: this.get('escalate-card'),
      removalPolicy: props.removalPolicy,
    });

    // The two functions that call the model: the run's model turn and the completion API.
    grantModelAccess(
      MODEL_CALLING_HANDLERS.map((name) => this.get(name)),
      props,
    );
    for (const secret of props.mcpServerSecrets ?? []) {
      for (const name of MCP_CONNECTING_HANDLERS) secret.grantRead(this.get(name));
    }
  }

  /** The function of one handler. */
  public get(name: HandlerName): LambdaFunction {
    return this.functions[name];
  }

  /**
   * A channel's function (`channels` props), built like every handler's (its own role and log
   * group, the common environment) with the channel's variables added. Its data and secrets are
   * granted by the channel.
   */
  public createChannelFunction(name: ChannelHandlerName, environment: HandlerEnvironment): LambdaFunction {
    const sizing = CHANNEL_HANDLER_SIZING[name];
    const created = this.createFunction(name, sizing.timeout, sizing.memorySize);
    for (const [variable, value] of Object.entries(environment)) {
      if (value !== undefined) created.addEnvironment(variable, value);
    }
    return created;
  }

  /** Lets `handler` put countersign's events on the default bus (the card events it announces). */
  public grantAnnounce(handler: LambdaFunction): void {
    this.eventBus.grantPutEventsTo(handler);
    handler.addEnvironment('COUNTERSIGN_EVENT_BUS_NAME' satisfies EnvironmentVariableName, 'default');
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
      COUNTERSIGN_PRINCIPAL_QUOTAS: JSON.stringify(props.principalQuotas),
      // Powertools Logger and Metrics read their service name and level from these.
      POWERTOOLS_SERVICE_NAME: props.serviceName,
      POWERTOOLS_LOG_LEVEL: props.logLevel,
      COUNTERSIGN_INBOX_SHARDS: String(props.inboxShards),
      COUNTERSIGN_ENDED_RUN_RETENTION_SECONDS: String(props.retention.endedRuns.toSeconds()),
    };
    if (props.retention.decisions !== undefined) {
      environment.COUNTERSIGN_DECISION_RETENTION_SECONDS = String(props.retention.decisions.toSeconds());
    }
    if (props.openAiCompatible !== undefined) {
      environment.COUNTERSIGN_OPENAI_BASE_URL = props.openAiCompatible.baseUrl;
      environment.COUNTERSIGN_OPENAI_SECRET_ARN = props.openAiCompatible.apiKeySecret.secretArn;
    }
    return environment;
  }

  private createFunction(name: BundledHandlerName, timeout: Duration, memorySize: number): LambdaFunction {
    const props = this.props;
    const environment = this.environment;
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

    return new LambdaFunction(this, constructId, {
      code: createHandlerCode(name, {
        ...props.handlerCode,
        ...(props.toolsModulePath === undefined ? {} : { toolsModulePath: props.toolsModulePath }),
      }),
      handler: 'index.handler',
      runtime: LAMBDA_RUNTIME,
      architecture: Architecture.ARM_64,
      tracing: Tracing.ACTIVE,
      timeout,
      memorySize,
      role,
      logGroup,
      environment: {
        ...environment,
        ...((MCP_HOST_CHECKING_HANDLERS as readonly BundledHandlerName[]).includes(name)
          ? { COUNTERSIGN_MCP_ALLOWED_HOSTS: props.mcpAllowedHosts.join(',') }
          : {}),
        ...(props.modelPrices !== undefined &&
        (MODEL_CALLING_HANDLERS as readonly BundledHandlerName[]).includes(name)
          ? { COUNTERSIGN_MODEL_PRICES: JSON.stringify(props.modelPrices) }
          : {}),
      },
    });
  }
}
