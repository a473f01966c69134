import { type CfnOutput, Lazy, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { EnvironmentVariableName } from '../lambdas/contract/environment.js';
import { CountersignApi } from './api.js';
import { CountersignAuth } from './auth.js';
import { resolveChannels } from './channel-props.js';
import { CountersignNotificationChannels } from './channels.js';
import { CountersignFunctions } from './countersign-functions.js';
import {
  addCountersignOutputs,
  type CountersignOutputName,
  type CountersignOutputsOptions,
} from './countersign-outputs.js';
import type { CountersignProps } from './countersign-props.js';
import { resolveObservabilitySettings, resolveRunbookUrl, resolveSettings } from './countersign-settings.js';
import { CountersignData } from './data.js';
import { CountersignEventsEndpoint } from './events-endpoint.js';
import { CountersignExternalAgents } from './external-agents.js';
import { loadEsbuild, PREBUILT_HANDLERS_DIRECTORY, readPrebuiltManifest } from './handler-assets.js';
import type { HandlerName } from './handler-names.js';
import { applyIdentityGroupGrants, resolveIdentityGroupGrants } from './identity-group-grants.js';
import { resolveInboxShards } from './inbox-shards.js';
import { resolveInboxUrl } from './inbox-sign-in.js';
import { applyReservedConcurrency, overflowExpiration, resolveLimits } from './limits.js';
import { resolveMcpAllowedHosts } from './mcp-allowed-hosts.js';
import { CountersignObservability } from './observability.js';
import { grantDecision, grantEndRun, grantStopRun } from './run-grants.js';
import { invalidProp } from './validation-error.js';
import { CountersignWorkflow } from './workflow.js';

export type { ExternalIdentityProvider } from './auth.js';
export type {
  CountersignChannelsProps,
  CountersignEmailChannel,
  CountersignSlackChannel,
  CountersignSlackRoute,
} from './channel-props.js';
export {
  COUNTERSIGN_DEFAULTS,
  type CountersignLogLevel,
  type CountersignProps,
} from './countersign-props.js';
export type { ExternalAgentClientProps, ExternalAgentsProps } from './external-agents.js';
export type { HandlerName } from './handler-names.js';
export type { InboxSignInProps } from './inbox-sign-in.js';
export type {
  CountersignReservedConcurrency,
  CountersignRetention,
  CountersignThrottling,
} from './limits.js';
export type { ModelProvider, OpenAiCompatibleEndpoint } from './model-permissions.js';
export type { CountersignPolicyFloor } from './policy-floor-props.js';
export type { CountersignQuotas } from './quota-props.js';

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
  /**
   * The asymmetric key (`ECC_NIST_P256`) that signs run receipts; only the deciding function may
   * use it. Verifiers need its public key (`kms:GetPublicKey`, granted to nobody by default).
   */
  public readonly receiptSigningKey: Key;
  /** Sealed run state too large for a DynamoDB item. */
  public readonly overflowBucket: Bucket;
  /** The run workflow, one execution per run (continued as new for long runs). */
  public readonly stateMachine: StateMachine;
  /** The HTTP API of runs, inbox and decisions. */
  public readonly httpApi: HttpApi;
  /** The base URL of the API's default stage. */
  public readonly apiUrl: string;
  /** The inbox page's URL (the `inboxUrl` prop, else the API's): where sign-in returns and cards link. */
  public readonly inboxUrl: string;
  /** Every handler function by name. */
  public readonly functions: Readonly<Record<HandlerName, LambdaFunction>>;
  /** The API's authentication: the JWT authorizer and, by default, the Cognito user pool. */
  public readonly auth: CountersignAuth;
  /** GET /runs/{id}/events as server-sent events: a streaming function URL (docs/previews.md). */
  public readonly eventsEndpoint: CountersignEventsEndpoint;

  /** The machine clients of agents that run elsewhere, when `externalAgents` names any. */
  public readonly externalAgents?: CountersignExternalAgents;

  /** The dashboard, the alarms, their SNS topics and the saved log queries. */
  public readonly observability: CountersignObservability;
  /** The notification channels switched on by the `channels` props; undefined without any. */
  public readonly channels?: CountersignNotificationChannels;
  /** The runbook every alarm links to: `runbookUrl`, or the one the API serves (`<apiUrl>runbook`). */
  public readonly runbookUrl: string;

  private readonly data: CountersignData;

  public constructor(scope: Construct, id: string, props: CountersignProps = {}) {
    super(scope, id);
    const settings = resolveSettings(this, props);
    const observabilitySettings = resolveObservabilitySettings(this, props);
    const prebuilt = readPrebuiltManifest(PREBUILT_HANDLERS_DIRECTORY);
    if (prebuilt !== undefined && settings.toolsModulePath !== undefined && loadEsbuild() === undefined) {
      throw invalidProp(
        this,
        `toolsModule ${JSON.stringify(props.toolsModule)} must be bundled at synth, and esbuild is not installed; add it to the CDK app (npm install --save-dev esbuild) or remove toolsModule.`,
      );
    }

    const limits = resolveLimits(this, props);
    const inboxShards = resolveInboxShards(this, props.inboxShards);
    const mcpAllowedHosts = resolveMcpAllowedHosts(this, props.mcpAllowedHosts);
    const channels = resolveChannels(this, props.channels);

    this.data = new CountersignData(this, 'Data', {
      removalPolicy: settings.removalPolicy,
      overflowExpiration: overflowExpiration(limits.retention, settings.approvalTimeout),
    });
    const functions = new CountersignFunctions(this, 'Functions', {
      data: this.data,
      ...settings,
      ...observabilitySettings,
      inboxShards,
      retention: limits.retention,
      mcpAllowedHosts,
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
    // The API is made after the authorizer it uses; the page's URL is read from it at synth.
    let api: CountersignApi | undefined;
    this.inboxUrl = resolveInboxUrl(this, props.inboxUrl, Lazy.string({ produce: () => api?.url ?? '' }));
    this.auth = new CountersignAuth(this, 'Auth', {
      removalPolicy: settings.removalPolicy,
      inboxUrl: this.inboxUrl,
      ...(props.inboxSignIn === undefined ? {} : { inboxSignIn: props.inboxSignIn }),
      ...(props.threatProtection === undefined ? {} : { threatProtection: props.threatProtection }),
      ...(props.externalIdentityProvider === undefined
        ? {}
        : { externalIdentityProvider: props.externalIdentityProvider }),
    });
    this.externalAgents =
      props.externalAgents === undefined
        ? undefined
        : new CountersignExternalAgents(this, 'ExternalAgents', {
            agents: props.externalAgents,
            ...(this.auth.userPool && this.auth.managedLogin
              ? { userPool: this.auth.userPool, domain: this.auth.managedLogin.domain }
              : {}),
            ...(props.externalIdentityProvider
              ? { externalIssuerUrl: props.externalIdentityProvider.issuerUrl }
              : {}),
            personAudience: props.externalIdentityProvider?.audience ?? [],
          });
    if (channels.slack !== undefined || channels.email !== undefined) {
      this.channels = new CountersignNotificationChannels(this, 'Channels', {
        channels,
        functions,
        data: this.data,
        table: this.data.table,
        stateMachine: workflow.stateMachine,
        removalPolicy: settings.removalPolicy,
      });
    }
    const slackInteractions = this.channels?.functions['slack-interactions'];
    api = new CountersignApi(this, 'Api', {
      functions,
      logRetention: settings.logRetention,
      removalPolicy: settings.removalPolicy,
      authorizer: this.auth.authorizer,
      // Without machine clients no token carries the scope the machine routes require.
      machineAuthorizer: this.externalAgents?.authorizer ?? this.auth.authorizer,
      throttling: limits.throttling,
      ...(slackInteractions === undefined
        ? {}
        : { channelFunctions: { 'slack-interactions': slackInteractions } }),
    });
    // Messages and mails link each card under the inbox page, like the event's cardUrl.
    this.channels?.useInboxUrl(this.inboxUrl);
    applyReservedConcurrency(functions.functions, limits.reservedConcurrency);

    this.table = this.data.table;
    this.key = this.data.key;
    this.sealingKey = this.data.sealingKey;
    this.receiptSigningKey = this.data.receiptSigningKey;
    this.overflowBucket = this.data.overflowBucket;
    this.stateMachine = workflow.stateMachine;
    this.httpApi = api.httpApi;
    this.apiUrl = api.url;
    this.functions = functions.functions;
    // The alarms link the runbook the API serves (GET /runbook) unless the team keeps its own.
    this.runbookUrl = resolveRunbookUrl(this, props.runbookUrl, api.urlOf('getRunbook'));
    this.observability = new CountersignObservability(this, 'Observability', {
      functions: functions.functions,
      stateMachine: this.stateMachine,
      table: this.table,
      httpApi: this.httpApi,
      serviceName: observabilitySettings.serviceName,
      removalPolicy: settings.removalPolicy,
      runbookUrl: this.runbookUrl,
      ...(props.dashboard === undefined ? {} : { dashboard: props.dashboard }),
      ...(props.alarmTopics === undefined ? {} : { alarmTopics: props.alarmTopics }),
      ...(props.alarmThresholds === undefined ? {} : { alarmThresholds: props.alarmThresholds }),
      ...(this.channels === undefined
        ? {}
        : {
            channels: {
              functions: Object.values(this.channels.functions),
              deadLetterQueues: this.channels.deadLetterQueues,
            },
          }),
    });

    const apiRuns = functions.get('api-runs');
    apiRuns.addEnvironment(
      'COUNTERSIGN_STATE_MACHINE_ARN' satisfies EnvironmentVariableName,
      this.stateMachine.stateMachineArn,
    );
    this.grantStartRun(apiRuns);
    grantStopRun(this, this.stateMachine, apiRuns);
    // Agents that run elsewhere (docs/external-agents.md): the approval API starts their runs,
    // and NotifyCaller signs their webhooks with their own secrets.
    const apiExternal = functions.get('api-external');
    apiExternal.addEnvironment(
      'COUNTERSIGN_STATE_MACHINE_ARN' satisfies EnvironmentVariableName,
      this.stateMachine.stateMachineArn,
    );
    this.grantStartRun(apiExternal);
    this.externalAgents?.grantWebhookSigning(functions.get('notify-caller'));
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
    // The decision delivers what it claimed; the probe redelivers a claim whose request failed.
    for (const name of ['api-decision', 'report-waiting-runs'] as const) {
      grantDecision(this.stateMachine, functions.get(name));
    }
    // The page signs in with these settings; a waiting card's event links to its address under the page.
    if (this.auth.inboxSignIn !== undefined) {
      functions
        .get('api-inbox')
        .addEnvironment(
          'COUNTERSIGN_INBOX_SIGN_IN' satisfies EnvironmentVariableName,
          Stack.of(this).toJsonString(this.auth.inboxSignIn),
        );
    }
    functions
      .get('await-approval')
      .addEnvironment('COUNTERSIGN_INBOX_URL' satisfies EnvironmentVariableName, this.inboxUrl);
    // The card reader ends the run of a card it cannot open, on every surface that reads cards,
    // the probe's redelivery among them (api-runs already may: it writes the table and stops
    // executions for a cancel).
    for (const name of ['api-inbox', 'api-decision', 'api-run-events', 'report-waiting-runs'] as const) {
      grantEndRun(this, { table: this.table, stateMachine: this.stateMachine }, functions.get(name));
    }

    this.eventsEndpoint = new CountersignEventsEndpoint(this, 'Events', {
      handler: functions.get('api-run-events'),
      issuerUrl: this.auth.issuerUrl,
      // The audiences the HTTP API's authorizer accepts: the external provider's, or the app client.
      audience: props.externalIdentityProvider?.audience ?? [
        ...(this.auth.userPoolClient ? [this.auth.userPoolClient.userPoolClientId] : []),
        ...(this.auth.managedLogin ? [this.auth.managedLogin.client.userPoolClientId] : []),
      ],
    });
  }

  /**
   * Adds the stack outputs sign-in and the smoke test need: `ApiUrl`, `EventsUrl`, `RunbookUrl`,
   * `IssuerUrl`, with the construct's user pool `UserPoolId` and `UserPoolClientId`, and
   * `StateMachineArn` and `TableName`. Optional: the construct adds no output by itself.
   *
   * @example
   * new Countersign(this, 'Approvals').addOutputs(); // npm run smoke -- --url <ApiUrl> --token <JWT>
   */
  public addOutputs(
    options: CountersignOutputsOptions = {},
  ): Partial<Record<CountersignOutputName, CfnOutput>> {
    return addCountersignOutputs(this, options);
  }

  /** Lets `grantee` start run executions (states:StartExecution on this state machine only). */
  public grantStartRun(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['states:StartExecution'],
      resourceArns: [this.stateMachine.stateMachineArn],
    });
  }

  /** Lets `grantee` read the table (and decrypt it), e.g. for a reporting job. */
  public grantReadData(grantee: IGrantable): Grant {
    return this.data.grantTableRead(grantee);
  }
}
