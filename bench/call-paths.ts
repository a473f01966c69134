import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { DynamoPageStore } from '../lambdas/adapters/dynamo/page-store.js';
import { EnvelopeSealer, type KeyWrapping } from '../lambdas/adapters/envelope-sealer.js';
import { LocalKeyring } from '../lambdas/adapters/local-keyring.js';
import type { UserProfile } from '../lambdas/core/identity.js';
import type { Page } from '../lambdas/core/pages.js';
import type { RunExecutions } from '../lambdas/core/ports.js';
import type { RunDependencies } from '../lambdas/core/run-dependencies.js';
import { createApiHandlers } from '../lambdas/handlers/api-handlers.js';
import { createStepHandlers } from '../lambdas/handlers/step-handlers.js';
import { DEMO_EXTERNAL_CONFIGURATION_ID } from '../lambdas/local/demo-data.js';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../lambdas/local/embedded-runtime.js';
import { LocalDataDirectory } from '../lambdas/local/local-data-directory.js';
import { DEMO_MACHINE_CLIENT_ID } from '../lambdas/local/local-machine-clients.js';
import { synthesizeStateMachineDefinition } from '../lib/state-machine-definition.js';

/**
 * The per-principal quotas of the benches, in process and in the shipped bundles: the bench's
 * users start hundreds of runs in seconds; the quota writes are still counted.
 */
export const BENCH_PRINCIPAL_QUOTAS = {
  runsStartedPerMinute: 100_000,
  waitingRuns: 100_000,
  openEventStreams: 100_000,
  completionsPerMinute: 100_000,
};

/** The embedded runtime the benches drive: in memory, the deployed ASL, quiet. */
export function startBenchRuntime(baseDirectory: string): Promise<EmbeddedRuntime> {
  return startEmbeddedRuntime({
    definition: synthesizeStateMachineDefinition(),
    baseDirectory,
    port: 0,
    inMemory: true,
    principalQuotas: BENCH_PRINCIPAL_QUOTAS,
    writeLogLine: () => {},
    writeMetricLine: () => {},
    logLevel: 'ERROR',
  });
}

/** The bench's own user: may run and approve page writes on the bench pages. */
export const BENCH_USER_ID = 'bench-operator';

/** Pages `bench-1` ... `bench-5`, so one turn can propose five previewing writes. */
export const BENCH_PAGE_IDS = ['bench-1', 'bench-2', 'bench-3', 'bench-4', 'bench-5'] as const;

/** One previewing call: the single `update_page_metadata` of the README's quickstart. */
export const ONE_PREVIEWING_CALL = "Set the description of page bench-1 to 'Spring sale'";

/** Five previewing calls in one turn (issue #4): one `update_page_metadata` per bench page. */
export const FIVE_PREVIEWING_CALLS = `Set ${BENCH_PAGE_IDS.map(
  (pageId, index) => `the description of page ${pageId} to 'Offer ${index + 1}'`,
).join(', ')}`;

/** What one HTTP request through an API Lambda answered. */
export interface ApiAnswer {
  statusCode: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are read field by field by the callers.
  json: any;
}

/** What the ModelTurn step hands the state machine. */
export interface ModelReply {
  turn: number;
  route: string;
}

/**
 * The suspend and resume paths of a run, each step run as a COLD Lambda container would run
 * it: fresh handlers over fresh dependencies whose envelope sealer and page store have empty
 * caches, sharing the runtime's table, keyring and call counter. Executions are counted, not run, so
 * each step is driven (and measured) alone. The bench and the call-budget test share this, so
 * the numbers the bench prints are the numbers the test asserts.
 */
export class CallPaths {
  private readonly runtime: EmbeddedRuntime;
  private readonly keyWrapping: KeyWrapping;
  private warm: RunDependencies | undefined;

  private constructor(runtime: EmbeddedRuntime, keyWrapping: KeyWrapping) {
    this.runtime = runtime;
    this.keyWrapping = keyWrapping;
  }

  /**
   * Opens the paths over a running embedded runtime and seeds the bench user and pages. The
   * sealer wraps its keys with the local keyring, or with `keyWrapping` (the first-request
   * bench's, through the fake KMS the shipped bundles reach too).
   */
  public static async open(
    runtime: EmbeddedRuntime,
    baseDirectory: string,
    options: { keyWrapping?: KeyWrapping } = {},
  ): Promise<CallPaths> {
    const directory = await LocalDataDirectory.prepare({ baseDirectory, configuredPath: undefined });
    const keyWrapping =
      options.keyWrapping ?? (await new LocalKeyring(directory.keysDirectory).keyWrapping());
    await seedBenchData(runtime.dependencies);
    return new CallPaths(runtime, keyWrapping);
  }

  /** Dependencies as a cold container builds them: a new sealer, counted executions. */
  public coldDependencies(): RunDependencies {
    const calls = this.runtime.calls;
    const executions: RunExecutions = {
      async start() {
        calls.record('SFN', 'StartExecution');
      },
      async resume(_taskToken, decision) {
        calls.record('SFN', decision.kind === 'approve' ? 'SendTaskSuccess' : 'SendTaskFailure');
        return { kind: 'delivered' };
      },
      async stopExecution() {
        calls.record('SFN', 'StopExecution');
      },
    };
    return {
      ...this.runtime.dependencies,
      sealer: new EnvelopeSealer({ keyWrapping: this.keyWrapping, callCounter: calls }),
      // A new store instance: the read gate caches pages per store, and a cold container has none.
      pages: new DynamoPageStore({
        client: this.runtime.dynamo.documentClient,
        tableName: this.runtime.dynamo.tableName,
      }),
      executions,
    };
  }

  /** POST /runs through a cold `runs` Lambda; the run is created, its execution only counted. */
  public async startRun(input: string, as = BENCH_USER_ID): Promise<string> {
    const answer = await this.request('runs', 'POST /runs', as, { body: { taskId: 'page-metadata', input } });
    if (answer.statusCode !== 202) throw new Error(`POST /runs answered ${answer.statusCode}`);
    return answer.json.runId as string;
  }

  /** Prepare, then ModelTurn, each in its own cold container: the run up to the model's reply. */
  public async runToModelReply(runId: string): Promise<ModelReply> {
    await createStepHandlers(this.coldDependencies()).Prepare({ runId, executionId: `${runId}-bench` });
    const reply = (await createStepHandlers(this.coldDependencies()).ModelTurn({
      runId,
      turn: 0,
    })) as ModelReply;
    return { turn: reply.turn, route: reply.route };
  }

  /**
   * The AwaitApproval step in a cold container: from the model's reply to waiting, with the
   * input the state machine gives it.
   */
  public async suspend(runId: string, reply: Pick<ModelReply, 'turn'>): Promise<void> {
    await createStepHandlers(this.coldDependencies()).AwaitApproval({
      runId,
      turn: reply.turn,
      taskToken: `bench-task-token-${runId}`,
    });
  }

  /**
   * Pauses `count` more runs through warm containers (one sealer for all, so cards share a
   * sealing key per 1,000 blobs, as a warm AwaitApproval container seals them): the queue the
   * inbox is measured against. Not measured itself.
   */
  public async fillWaitingRuns(count: number, input = ONE_PREVIEWING_CALL): Promise<void> {
    this.warm ??= this.coldDependencies();
    const steps = createStepHandlers(this.warm);
    const api = createApiHandlers(this.warm);
    for (let index = 0; index < count; index += 1) {
      const started = await api['api-runs'](
        createApiEvent('POST /runs', BENCH_USER_ID, { body: { taskId: 'page-metadata', input } }),
      );
      const runId = (JSON.parse(String(started.body)) as { runId: string }).runId;
      await steps.Prepare({ runId, executionId: `${runId}-bench` });
      const reply = (await steps.ModelTurn({ runId, turn: 0 })) as ModelReply;
      await steps.AwaitApproval({
        runId,
        turn: reply.turn,
        taskToken: `bench-task-token-${runId}`,
      });
    }
  }

  /**
   * The ExecuteTools step in a cold container, after the decision: the approved calls run under
   * the call ledger and their results are recorded.
   */
  public async execute(runId: string, turn: number): Promise<void> {
    await createStepHandlers(this.coldDependencies()).ExecuteTools({ runId, turn });
  }

  /** The digest of a waiting run's card (read outside any measured window). */
  public async digestOf(runId: string): Promise<string> {
    const card = await this.runtime.dependencies.runs.getCard(runId);
    if (!card) throw new Error(`run ${runId} has no card`);
    return card.digest;
  }

  /** POST /runs/{id}/decision through a cold `decision` Lambda: the resume path. */
  public async decide(
    runId: string,
    digest: string,
    decision: 'approve' | 'reject' = 'approve',
    as = BENCH_USER_ID,
  ): Promise<ApiAnswer> {
    return this.request('decision', 'POST /runs/{id}/decision', as, {
      pathParameters: { id: runId },
      body: { digest, decision },
    });
  }

  /** POST /runs/{id}/decision with `decision: "edit"` through a cold `decision` Lambda: new arguments for calls. */
  public async edit(
    runId: string,
    digest: string,
    edits: ReadonlyArray<{ index: number; arguments: unknown }>,
    as = BENCH_USER_ID,
  ): Promise<ApiAnswer> {
    return this.request('decision', 'POST /runs/{id}/decision', as, {
      pathParameters: { id: runId },
      body: { digest, decision: 'edit', edits },
    });
  }

  /** GET /inbox through a cold `inbox` Lambda. */
  public async loadInbox(limit: number, as = BENCH_USER_ID): Promise<ApiAnswer> {
    return this.request('inbox', 'GET /inbox', as, { query: { limit: String(limit) } });
  }

  /** GET /runs/{id}/calls/{index} through a cold `inbox` Lambda: a call's whole arguments. */
  public async readCall(runId: string, index: number, as = BENCH_USER_ID): Promise<ApiAnswer> {
    return this.request('inbox', 'GET /runs/{id}/calls/{index}', as, {
      pathParameters: { id: runId, index: String(index) },
    });
  }

  /**
   * POST /external-runs through a cold `external` Lambda as the demo agent (a machine client): one
   * write for approval under `demo-external`; its execution only counted.
   */
  public async submitExternalRun(clientKey: string): Promise<string> {
    const answer = await this.request('external', 'POST /external-runs', DEMO_MACHINE_CLIENT_ID, {
      body: externalTurn(clientKey),
    });
    if (answer.statusCode !== 202) throw new Error(`POST /external-runs answered ${answer.statusCode}`);
    return answer.json.runId as string;
  }

  private async request(
    api: 'runs' | 'inbox' | 'decision' | 'external',
    routeKey: string,
    as: string,
    options: { body?: unknown; pathParameters?: Record<string, string>; query?: Record<string, string> },
  ): Promise<ApiAnswer> {
    const event = createApiEvent(routeKey, as, options);
    const result = await createApiHandlers(this.coldDependencies())[`api-${api}`](event);
    const body = typeof result.body === 'string' ? result.body : '';
    return { statusCode: result.statusCode ?? 500, json: body === '' ? undefined : JSON.parse(body) };
  }
}

/** The one-write turn the bench's external runs submit (docs/external-agents.md). */
export function externalTurn(clientKey: string) {
  return {
    configurationId: DEMO_EXTERNAL_CONFIGURATION_ID,
    clientKey,
    summary: 'Invoice ACME for the March consulting days.',
    tools: [{ name: 'send_invoice', effect: 'write' }],
    calls: [
      {
        tool: 'send_invoice',
        arguments: { customer: 'ACME', amountCents: 120_000, currency: 'EUR' },
        preview: ['Invoice INV-7 to ACME: 1,200.00 EUR'],
      },
    ],
  };
}

/**
 * An HTTP API (payload v2) event as API Gateway hands it over after its JWT authorizer: for
 * the handlers in this process, and for the shipped bundles of the first-request bench.
 */
export function createApiEvent(
  routeKey: string,
  as: string,
  options: { body?: unknown; pathParameters?: Record<string, string>; query?: Record<string, string> },
): APIGatewayProxyEventV2WithJWTAuthorizer {
  const [method = 'GET', routePath = '/'] = routeKey.split(' ');
  const rawPath = Object.entries(options.pathParameters ?? {}).reduce(
    (path, [name, value]) => path.replace(`{${name}}`, value),
    routePath,
  );
  return {
    version: '2.0',
    routeKey,
    rawPath,
    rawQueryString: new URLSearchParams(options.query ?? {}).toString(),
    headers: options.body === undefined ? {} : { 'content-type': 'application/json' },
    ...(options.query ? { queryStringParameters: options.query } : {}),
    ...(options.pathParameters ? { pathParameters: options.pathParameters } : {}),
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    isBase64Encoded: false,
    requestContext: {
      http: { method, path: rawPath },
      requestId: 'bench',
      authorizer: { jwt: { claims: { sub: as }, scopes: [] } },
    },
  } as unknown as APIGatewayProxyEventV2WithJWTAuthorizer;
}

const BENCH_USER: UserProfile = {
  userId: BENCH_USER_ID,
  displayName: 'Bench operator',
  grants: ['agent_run', 'agent_approve'],
  pageAccess: [...BENCH_PAGE_IDS],
  languageAccess: '*',
  toolAccess: ['update_page_metadata'],
};

async function seedBenchData(dependencies: RunDependencies): Promise<void> {
  await dependencies.users.putUser(BENCH_USER);
  for (const pageId of BENCH_PAGE_IDS) {
    const page: Page = {
      pageId,
      language: 'en',
      slug: `/${pageId}`,
      title: `Bench page ${pageId}`,
      description: `The description of ${pageId} before the run.`,
      keywords: 'bench',
      author: 'bench',
      ogTitle: '',
      ogDescription: '',
      body: `Body of ${pageId}.`,
      updatedAt: '2026-01-01T00:00:00.000Z',
      updatedBy: 'seed',
    };
    await dependencies.pages.putPage(page);
  }
}
