import { generateKeyPairSync } from 'node:crypto';
import { AwsCallCounter } from '../adapters/aws-call-counter.js';
import { FileBlobStore } from '../adapters/blob-store.js';
import { announceClosedCards } from '../adapters/card-closing-announcer.js';
import { DynamoApproverResponseStore } from '../adapters/dynamo/approver-response-store.js';
import { DynamoConfigurationRepository } from '../adapters/dynamo/configuration-repository.js';
import { DynamoExternalRunStore } from '../adapters/dynamo/dynamo-external-run-store.js';
import { DynamoQuotaStore } from '../adapters/dynamo/dynamo-quota-store.js';
import { DynamoPageStore } from '../adapters/dynamo/page-store.js';
import { DynamoReceiptChainStore } from '../adapters/dynamo/receipt-chain-store.js';
import { DynamoRunRepository } from '../adapters/dynamo/run-repository.js';
import { RunTable } from '../adapters/dynamo/run-table.js';
import { DynamoSlackUserDirectory } from '../adapters/dynamo/slack-user-directory.js';
import { DynamoUserDirectory } from '../adapters/dynamo/user-directory.js';
import { EmbeddedMetrics } from '../adapters/embedded-metrics.js';
import { EnvelopeSealer } from '../adapters/envelope-sealer.js';
import { buildAwaitingApprovalDetail } from '../adapters/event-bridge-run-notifier.js';
import { LocalKeyring } from '../adapters/local-keyring.js';
import { LocalReceiptSigner } from '../adapters/local-receipt-signer.js';
import { EnvironmentMcpSecrets } from '../adapters/mcp/environment-mcp-secrets.js';
import { SdkMcpServers } from '../adapters/mcp/sdk-mcp-servers.js';
import { meterRunRepository } from '../adapters/metered-run-repository.js';
import { createModelProviderResolver } from '../adapters/models/model-provider-resolver.js';
import { OpenAiCompatibleModel } from '../adapters/models/openai-compatible-model.js';
import { ScriptedModel } from '../adapters/models/scripted-model.js';
import { OutboundWebhookPoster } from '../adapters/outbound/outbound-webhook-poster.js';
import { DynamoSkillRepository } from '../adapters/skills/dynamo-skill-repository.js';
import { StructuredLogger, writeLineToStdout } from '../adapters/structured-logger.js';
import { INBOX_SIGN_IN_SCOPES, type InboxSignIn } from '../contract/inbox-sign-in.js';
import { NOTIFICATION_DETAIL_TYPES, NOTIFICATION_EVENT_SOURCE } from '../contract/notification-events.js';
import { ENDED_RUN_RETENTION_DAYS_DEFAULT, THROTTLING_DEFAULTS } from '../core/limits.js';
import { policyFloorSchema } from '../core/policy/policy-floor.js';
import type {
  AwaitingApprovalEvent,
  CardClosedEvent,
  ExternalRunAnsweredEvent,
  RunExecutions,
  RunNotifier,
} from '../core/ports.js';
import { systemClock } from '../core/ports.js';
import { principalQuotasSchema } from '../core/quotas/principal-quotas.js';
import type { ReceiptSigner } from '../core/receipts/receipt-ports.js';
import type { RunDependencies } from '../core/run-dependencies.js';
import { resolveSkillsMaxBytes } from '../core/skills/compose-skills.js';
import { createMcpToolStandIn } from '../core/tools/mcp/mcp-tools.js';
import { ToolRegistry } from '../core/tools/tool.js';
import { createApiHandlers } from '../handlers/api-handlers.js';
import {
  localIdentityGroupGrants,
  localMcpHostPolicy,
  localPolicyFloor,
  localPrincipalQuotas,
  localSkillsMaxBytes,
} from '../handlers/config.js';
import { createStepHandlers } from '../handlers/step-handlers.js';
import { createEscalationTimerHandler } from '../handlers/timers/escalation-timer.js';
import { createBuiltInTools } from '../tools/built-in-tools.js';
import { agreeApprovalTimeout } from './approval-timeout-agreement.js';
import { DEMO_USERS, seedDemoData } from './demo-data.js';
import type { EmbeddedRuntimeOptions } from './embedded-runtime-options.js';
import { InFlightInvocations } from './in-flight-invocations.js';
import { type LocalChannels, startLocalChannels } from './local-channels.js';
import { LocalTokenEndpoint } from './local-client-credentials.js';
import { LocalDataDirectory } from './local-data-directory.js';
import { type LocalDynamo, startLocalDynamo } from './local-dynamo.js';
import { LocalEscalationTimers } from './local-escalation-timers.js';
import { LocalHttpServer } from './local-http-server.js';
import { LocalJwtIssuer } from './local-jwt-issuer.js';
import { LocalMachineClients } from './local-machine-clients.js';
import { LocalOidcProvider } from './local-oidc-provider.js';
import { type LocalProbeSchedule, scheduleLocalProbe } from './local-probe-schedule.js';
import { localRoutesOf } from './local-routes.js';
import { LocalStateMachineRunner } from './local-state-machine-runner.js';
import { resumeInterruptedRuns } from './resume-runs.js';
import { sweepExpiredBlobs, sweepExpiredItems } from './retention-sweep.js';

/** The inbox page's app client at the local sign-in provider. */
export const LOCAL_INBOX_CLIENT_ID = 'countersign-inbox-local';

export interface EmbeddedRuntime {
  readonly url: string;
  /** The local sign-in provider's issuer URL (its discovery document, the `iss` of every local token). */
  readonly issuerUrl: string;
  /** Bearer tokens of the demo users, by user id. */
  readonly tokens: Readonly<Record<string, string>>;
  readonly dependencies: RunDependencies;
  readonly calls: AwsCallCounter;
  /** The local DynamoDB (dynalite) the stores use. */
  readonly dynamo: LocalDynamo;
  readonly runner: LocalStateMachineRunner;
  /** Each `Run Awaiting Approval` event's detail, as EventBridge would carry it (with the card's URL). */
  readonly notifications: ReadonlyArray<AwaitingApprovalEvent & { cardUrl?: string }>;
  /** Every `Card Closed` the notifier was handed. */
  readonly closedCards: ReadonlyArray<CardClosedEvent>;
  /** The channels that are on: wait for their deliveries, send the digests due. */
  readonly channels: Pick<LocalChannels, 'settle' | 'mailDueDigests'>;
  /** The `External Run Answered` events, as EventBridge would have received them. */
  readonly externalNotifications: ReadonlyArray<ExternalRunAnsweredEvent>;
  /** Machine clients (agents that run elsewhere): their token endpoint, and the clients with their secrets. */
  readonly machine: { readonly tokenUrl: string; readonly clients: LocalMachineClients };
  /** The waiting-runs probe on its schedule; `runOnce` runs it now. */
  readonly probe: LocalProbeSchedule;
  stop(): Promise<void>;
}

/**
 * countersign in one process on 127.0.0.1: the same handlers and the same ASL as the
 * deployed stack, with local stand-ins behind the same ports: dynalite (data on disk), a raw
 * AES keyring for the envelope encryption, aws-local-stepfunctions, a local JWT issuer, and
 * the scripted model.
 */
export async function startEmbeddedRuntime(options: EmbeddedRuntimeOptions): Promise<EmbeddedRuntime> {
  // Refused before anything starts: nothing to stop when the settings disagree.
  const approvalTimeoutSeconds = agreeApprovalTimeout(options.definition, options.approvalTimeoutSeconds);
  const writeLogLine = options.writeLogLine ?? writeLineToStdout;
  const logger =
    options.logger ??
    new StructuredLogger({
      service: 'countersign-local',
      level: options.logLevel ?? 'INFO',
      writeLine: writeLogLine,
    });
  const metrics = new EmbeddedMetrics({
    service: 'countersign-local',
    writeLine: options.writeMetricLine ?? writeLogLine,
    logger,
  });
  const directory = await LocalDataDirectory.prepare({
    baseDirectory: options.baseDirectory,
    configuredPath: options.dataDirectory,
  });
  const calls = new AwsCallCounter();
  const dynamo = await startLocalDynamo({
    ...(options.inMemory ? {} : { path: directory.dynaliteDirectory }),
    tableName: 'countersign',
  });
  const tableName = dynamo.tableName;
  const client = dynamo.documentClient;
  const retention = options.retention ?? { endedRunSeconds: ENDED_RUN_RETENTION_DAYS_DEFAULT * 86_400 };
  // dynalite has no TTL and a folder no lifecycle rule: what AWS would have removed goes now.
  const sweptAt = systemClock.now();
  const sweptItems = await sweepExpiredItems(client, tableName, sweptAt);
  const sweptBlobs = await sweepExpiredBlobs(
    directory.blobsDirectory,
    retention.endedRunSeconds + approvalTimeoutSeconds + 86_400,
    sweptAt,
  );
  if (sweptItems + sweptBlobs > 0) logger.info('expired data removed', { sweptItems, sweptBlobs });
  // Counted from here: the sweep stands in for TTL, which is no call of countersign's.
  calls.attachTo(dynamo.client);
  const notifications: Array<AwaitingApprovalEvent & { cardUrl?: string }> = [];
  const closedCards: CardClosedEvent[] = [];
  let channels: LocalChannels | undefined;
  const externalNotifications: ExternalRunAnsweredEvent[] = [];
  // The page's URL is the server's, known once it listens (before any run can pause).
  let inboxUrl: string | undefined;
  // The default bus deployed; here each event goes straight to the channels that are on.
  const notifier: RunNotifier = {
    async runAwaitingApproval(event) {
      calls.record('EventBridge', 'PutEvents');
      const detail = buildAwaitingApprovalDetail(event, inboxUrl);
      notifications.push(detail);
      logger.info('Run Awaiting Approval', {
        runId: event.runId,
        toolNames: event.toolNames,
        approverGroups: event.approverGroups,
        reason: event.reason,
      });
      channels?.deliver({
        source: NOTIFICATION_EVENT_SOURCE,
        'detail-type': NOTIFICATION_DETAIL_TYPES.awaitingApproval,
        detail,
      });
    },
    async cardClosed(event) {
      calls.record('EventBridge', 'PutEvents');
      closedCards.push(event);
      channels?.deliver({
        source: NOTIFICATION_EVENT_SOURCE,
        'detail-type': NOTIFICATION_DETAIL_TYPES.cardClosed,
        detail: event,
      });
    },
    async externalRunAnswered(event) {
      calls.record('EventBridge', 'PutEvents');
      externalNotifications.push(event);
      logger.info('External Run Answered', { runId: event.runId, status: event.status });
    },
  };
  // The same handler the deployed schedules invoke, on in-process timers (set once the
  // dependencies it reads exist).
  let escalate: ((timer: unknown) => Promise<unknown>) | undefined;
  const escalationTimers = new LocalEscalationTimers({
    fire: (timer) => requireEscalation(escalate)(timer),
    clock: systemClock,
    logger,
  });
  const escalations: RunDependencies['escalations'] = {
    async arm(timers) {
      for (const _timer of timers) calls.record('Scheduler', 'CreateSchedule');
      return escalationTimers.arm(timers);
    },
  };
  const issuer = await LocalJwtIssuer.open({ keysDirectory: directory.keysDirectory });
  const machineClients = await LocalMachineClients.open({ keysDirectory: directory.keysDirectory, issuer });
  const webhookUrlPolicy = options.webhookUrlPolicy ?? { allowLoopback: true };
  let runner: LocalStateMachineRunner | undefined;
  const inFlight = new InFlightInvocations();
  const executions: RunExecutions = {
    async start(input) {
      calls.record('SFN', 'StartExecution');
      return requireRunner(runner).start(input);
    },
    async resume(taskToken, decision) {
      calls.record('SFN', decision.kind === 'approve' ? 'SendTaskSuccess' : 'SendTaskFailure');
      return requireRunner(runner).resume(taskToken, decision);
    },
    async stopExecution(input) {
      calls.record('SFN', 'StopExecution');
      return requireRunner(runner).stopExecution(input);
    },
  };
  const mcpHostPolicy = options.mcpHostPolicy ?? localMcpHostPolicy();
  // Receipt entries are kept like decision records (the same retention stamp).
  const runTable = new RunTable(client, tableName, retention, systemClock);
  const receiptSigner = options.inMemory
    ? LocalReceiptSigner.withKey(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey)
    : new LocalReceiptSigner(directory.keysDirectory);
  // Created (or loaded) now, so its public half is there to verify with from the first start.
  await receiptSigner.signingKeyId();
  const dependencies: RunDependencies = {
    runs: announceClosedCards(
      meterRunRepository(
        new DynamoRunRepository({
          client,
          tableName,
          blobStore: new FileBlobStore(directory.blobsDirectory),
          retention,
        }),
        metrics,
      ),
      { notifier, clock: systemClock, logger, metrics },
    ),
    sealer: new EnvelopeSealer({
      keyWrapping: await new LocalKeyring(directory.keysDirectory).keyWrapping(),
      callCounter: calls,
    }),
    configurations: new DynamoConfigurationRepository({ client, tableName, logger }),
    users: new DynamoUserDirectory({ client, tableName }),
    slackUsers: new DynamoSlackUserDirectory({ client, tableName }),
    pages: new DynamoPageStore({ client, tableName }),
    skills: new DynamoSkillRepository({ client, tableName }),
    quotas: new DynamoQuotaStore({ client, tableName }),
    externalRuns: new DynamoExternalRunStore({
      client,
      tableName,
      retentionSeconds: approvalTimeoutSeconds + retention.endedRunSeconds,
    }),
    webhookSecrets: machineClients,
    webhookPoster: new OutboundWebhookPoster({ policy: webhookUrlPolicy }),
    // MCP tools as in the Lambdas: the steps list them from the servers, the API knows stand-ins.
    tools: new ToolRegistry([...createBuiltInTools(), ...(options.extraTools ?? [])], (name) =>
      createMcpToolStandIn(name, async (runId) => {
        const run = await dependencies.runs.getRun(runId);
        return run ? dependencies.configurations.getConfiguration(run.record.configurationId) : undefined;
      }),
    ),
    mcp: new SdkMcpServers({ secrets: new EnvironmentMcpSecrets(), hostPolicy: mcpHostPolicy }),
    models: createModelProviderResolver({
      scripted: new ScriptedModel(),
      ...(options.openAiCompatible
        ? {
            openAiCompatible: new OpenAiCompatibleModel({
              baseUrl: options.openAiCompatible.baseUrl,
              apiKey: async () => options.openAiCompatible?.apiKey ?? '',
            }),
          }
        : {}),
    }),
    executions,
    notifier,
    escalations,
    clock: systemClock,
    logger,
    metrics,
    settings: {
      approvalTimeoutSeconds,
      maxTurns: 50,
      skillsMaxBytes: resolveSkillsMaxBytes(options.skillsMaxBytes ?? localSkillsMaxBytes()),
      identityGroupGrants: options.identityGroupGrants ?? localIdentityGroupGrants(),
      policyFloor:
        options.policyFloor === undefined ? localPolicyFloor() : policyFloorSchema.parse(options.policyFloor),
      principalQuotas:
        options.principalQuotas === undefined
          ? localPrincipalQuotas()
          : principalQuotasSchema.parse(options.principalQuotas),
      mcpHostPolicy,
      webhookUrlPolicy,
      ...(options.modelPrices === undefined ? {} : { modelPrices: options.modelPrices }),
    },
    newId: () => crypto.randomUUID(),
    receipts: {
      chain: new DynamoReceiptChainStore({
        client,
        tableName,
        removeAfter: () => runTable.decisionRemoval(),
      }),
      // The local key stands in for the KMS key: created on first start, counted as KMS Sign.
      signer: countedReceiptSigner(receiptSigner, calls),
      responses: new DynamoApproverResponseStore({
        client,
        tableName,
        removeAfter: () => runTable.decisionRemoval(),
      }),
    },
  };
  escalate = inFlight.track({ escalate: createEscalationTimerHandler(dependencies) }).escalate;
  runner = new LocalStateMachineRunner({
    definition: options.definition,
    stepHandlers: inFlight.track(createStepHandlers(dependencies)),
    logger,
  });

  await seedDemoData(dependencies);
  await resumeInterruptedRuns(dynamo, dependencies, runner);
  const probe = scheduleLocalProbe(dependencies, options.probeIntervalMs);

  channels = startLocalChannels(options.channels ?? {}, dependencies, {
    client,
    tableName,
    inboxUrl: () => inboxUrl ?? '',
  });
  const provider = await LocalOidcProvider.start({
    port: options.signIn?.port ?? 0,
    keysDirectory: directory.keysDirectory,
    users: DEMO_USERS,
    logger,
    ...(options.signIn?.accessTokenSeconds ? { accessTokenSeconds: options.signIn.accessTokenSeconds } : {}),
  });
  // Filled in once the server listens: the page reads it per request, never before.
  const page: { signIn?: InboxSignIn } = {};
  const api = inFlight.track(createApiHandlers(dependencies, page));
  const server = new LocalHttpServer({
    port: options.port ?? 0,
    routes: localRoutesOf(api, channels.routeHandlers),
    verifier: provider,
    machineVerifier: machineClients,
    logger,
    throttling: options.throttling ?? THROTTLING_DEFAULTS,
  });
  const { url } = await server.start();
  inboxUrl = `${url}/`;
  const tokenEndpoint = new LocalTokenEndpoint({ port: options.tokenPort ?? 0, clients: machineClients });
  const { tokenUrl } = await tokenEndpoint.start();
  page.signIn = localInboxSignIn(provider, inboxUrl);
  provider.registerClient({
    clientId: LOCAL_INBOX_CLIENT_ID,
    redirectUris: [inboxUrl],
    signOutUris: [inboxUrl],
  });
  const started = channels;
  const tokens: Record<string, string> = {};
  for (const user of DEMO_USERS) {
    tokens[user.userId] = await provider.issuer.issue(
      { sub: user.userId, name: user.displayName, groups: user.grants },
      { expiresInSeconds: 12 * 3600 },
    );
  }
  return {
    url,
    issuerUrl: provider.url,
    tokens,
    dependencies,
    calls,
    dynamo,
    runner,
    notifications,
    closedCards,
    channels: started,
    externalNotifications,
    machine: { tokenUrl, clients: machineClients },
    probe,
    stop: async () => {
      await probe.stop();
      await tokenEndpoint.stop();
      await server.stop();
      escalationTimers.stop();
      await provider.stop();
      started.stop();
      await runner?.stop();
      // An aborted execution's step may still be mid-call: let it settle before dynalite
      // closes, or its late write would crash the process ("Database is closed").
      await inFlight.settle();
      await started.settle();
      await dynamo.stop();
    },
  };
}

function requireEscalation(
  escalate: ((timer: unknown) => Promise<unknown>) | undefined,
): (timer: unknown) => Promise<unknown> {
  if (!escalate) throw new Error('The local escalation handler is not ready yet.');
  return escalate;
}

/** The page's sign-in at the local provider, as the construct writes Cognito's for the deployed page. */
function localInboxSignIn(provider: LocalOidcProvider, inboxUrl: string): InboxSignIn {
  return {
    issuer: provider.url,
    clientId: LOCAL_INBOX_CLIENT_ID,
    scopes: [...INBOX_SIGN_IN_SCOPES],
    redirectUri: inboxUrl,
    signOutUrl: provider.signOutUrlOf(LOCAL_INBOX_CLIENT_ID, inboxUrl),
    connectOrigins: [provider.url],
  };
}

/** The local signer, each signature counted as the KMS Sign call it stands in for. */
function countedReceiptSigner(signer: ReceiptSigner, calls: AwsCallCounter): ReceiptSigner {
  return {
    signingKeyId: () => signer.signingKeyId(),
    sign: (message) => {
      calls.record('KMS', 'Sign');
      return signer.sign(message);
    },
  };
}

function requireRunner(runner: LocalStateMachineRunner | undefined): LocalStateMachineRunner {
  if (!runner) throw new Error('The local state machine runner is not ready yet.');
  return runner;
}
