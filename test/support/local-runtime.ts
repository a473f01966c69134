import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type ApiClient, createApiClient } from '../../lambdas/contract/api-client.js';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../../lambdas/local/embedded-runtime.js';
import { synthesizeStateMachineDefinition } from '../../lib/state-machine-definition.js';
import { createValidatingFetch } from './openapi-response-validator.js';

let definition: Record<string, unknown> | undefined;

/**
 * A JSON body read untyped: a raw answer's (`sendRaw`), or a typed answer's where the test reads
 * what the schema leaves open (a tool's arguments, the admin bodies the contract types `unknown`).
 */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type ResponseJson = any;

/** The ASL synthesized from the CDK app, once per test file (synthesis takes seconds). */
export function stateMachineDefinition(): Record<string, unknown> {
  definition ??= synthesizeStateMachineDefinition();
  return definition;
}

export interface TestRuntime extends EmbeddedRuntime {
  readonly baseDirectory: string;
  /**
   * Every log line of the runtime (handlers, runner, HTTP server) as the deployed logger
   * writes it, for the tests that prove nothing secret is logged.
   */
  readonly logLines: string[];
  /**
   * Any request, as sent, for what the typed client cannot say: a malformed or oversized body,
   * unknown fields, an unknown path or method, a query string under test. Same transport as the
   * typed client, so every answer is still checked against the committed OpenAPI document. A
   * well-formed request goes through {@link client} instead.
   */
  sendRaw(
    method: string,
    path: string,
    options?: { as?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; json: ResponseJson; text: string }>;
  /** The typed API client with a demo user's token (none without `as`), checked against the document. */
  client(as?: string): ApiClient;
}

/** A typed client of a running runtime whose every answer is checked against docs/openapi.json. */
export function apiClientOf(runtime: Pick<EmbeddedRuntime, 'url' | 'tokens'>, as?: string): ApiClient {
  return apiClientWithToken(runtime.url, as === undefined ? undefined : (runtime.tokens[as] ?? ''));
}

/**
 * A typed client that sends this bearer token (`undefined` or `''`: none), for a user a test
 * created or a token it signed itself; every answer is checked against the document.
 */
export function apiClientWithToken(baseUrl: string, token: string | undefined): ApiClient {
  return createApiClient({
    baseUrl,
    ...(token === undefined ? {} : { token }),
    fetch: createValidatingFetch(),
  });
}

/** `runtime.sendRaw`'s answer shape, sent with the client's untyped `send`. */
export async function sendThroughClient(
  client: ApiClient,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; token?: string } = {},
): Promise<{ status: number; json: ResponseJson; text: string }> {
  const answer = await client.send({
    method,
    path,
    ...(options.body === undefined ? {} : { body: options.body }),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.token === undefined ? {} : { token: options.token }),
  });
  return { status: answer.status, json: answer.body, text: answer.text };
}

/** A test runtime that also captured its metrics. */
export interface MeteredTestRuntime extends TestRuntime {
  /** Every EMF metric document the runtime wrote, one JSON line each. */
  readonly metricLines: string[];
}

/** Quotas no end-to-end file reaches, unless it sets its own (test/e2e/principal-quotas.test.ts). */
export const GENEROUS_QUOTAS = {
  runsStartedPerMinute: 10_000,
  waitingRuns: 10_000,
  openEventStreams: 1_000,
  completionsPerMinute: 10_000,
} as const;

/** Starts the embedded runtime on a random port with its data in a temporary folder. */
export async function startTestRuntime(
  options: {
    baseDirectory?: string;
    approvalTimeoutSeconds?: number;
    extraTools?: Parameters<typeof startEmbeddedRuntime>[0]['extraTools'];
    openAiCompatible?: { baseUrl: string; apiKey: string };
    policyFloor?: Parameters<typeof startEmbeddedRuntime>[0]['policyFloor'];
    throttling?: Parameters<typeof startEmbeddedRuntime>[0]['throttling'];
    retention?: Parameters<typeof startEmbeddedRuntime>[0]['retention'];
    mcpHostPolicy?: Parameters<typeof startEmbeddedRuntime>[0]['mcpHostPolicy'];
    channels?: Parameters<typeof startEmbeddedRuntime>[0]['channels'];
    signIn?: Parameters<typeof startEmbeddedRuntime>[0]['signIn'];
    principalQuotas?: Parameters<typeof startEmbeddedRuntime>[0]['principalQuotas'];
  } = {},
): Promise<MeteredTestRuntime> {
  const baseDirectory = options.baseDirectory ?? (await mkdtemp(join(tmpdir(), 'countersign-e2e-')));
  const logLines: string[] = [];
  const metricLines: string[] = [];
  const runtime = await startEmbeddedRuntime({
    definition: stateMachineDefinition(),
    baseDirectory,
    port: 0,
    // The deployed logger and metrics, at DEBUG, with their lines captured instead of printed.
    logLevel: 'DEBUG',
    writeLogLine: (line) => logLines.push(line),
    writeMetricLine: (line) => metricLines.push(line),
    ...(options.approvalTimeoutSeconds ? { approvalTimeoutSeconds: options.approvalTimeoutSeconds } : {}),
    ...(options.extraTools ? { extraTools: options.extraTools } : {}),
    ...(options.openAiCompatible ? { openAiCompatible: options.openAiCompatible } : {}),
    // The default floor unless a test sets one: a COUNTERSIGN_POLICY_FLOOR in the shell must not leak in.
    policyFloor: options.policyFloor ?? {},
    ...(options.throttling ? { throttling: options.throttling } : {}),
    ...(options.retention ? { retention: options.retention } : {}),
    ...(options.mcpHostPolicy ? { mcpHostPolicy: options.mcpHostPolicy } : {}),
    ...(options.channels ? { channels: options.channels } : {}),
    ...(options.signIn ? { signIn: options.signIn } : {}),
    // One editor starts runs here far faster than a person would; the quota tests set their own.
    principalQuotas: options.principalQuotas ?? GENEROUS_QUOTAS,
  });
  return {
    ...runtime,
    baseDirectory,
    logLines,
    metricLines,
    client: (as) => apiClientOf(runtime, as),
    sendRaw: (method, path, requestOptions = {}) =>
      sendThroughClient(apiClientOf(runtime, requestOptions.as), method, path, requestOptions),
  };
}

/**
 * Starts a test runtime before a file's tests and stops it, removing its data, after them.
 * The returned object stands for the runtime once it has started (it forwards every property).
 */
export function useTestRuntime(options?: Parameters<typeof startTestRuntime>[0]): MeteredTestRuntime {
  let current: MeteredTestRuntime | undefined;
  beforeAll(async () => {
    current = await startTestRuntime(options);
  });
  afterAll(async () => {
    if (!current) return;
    await current.stop();
    await removeTestData(current);
  });
  const started = (): MeteredTestRuntime => {
    if (!current) throw new Error('The test runtime is used before beforeAll started it.');
    return current;
  };
  return new Proxy({} as MeteredTestRuntime, {
    get: (_target, key) => Reflect.get(started(), key),
    set: (_target, key, value) => Reflect.set(started(), key, value),
  });
}

/** Removes a test runtime's data folder. */
export async function removeTestData(runtime: Pick<TestRuntime, 'baseDirectory'>): Promise<void> {
  await rm(runtime.baseDirectory, { recursive: true, force: true });
}

/** Polls until `check` returns a value, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Starts a run as `as` and waits until it leaves `running`. */
export async function startRunAndSettle(
  runtime: TestRuntime,
  input: string,
  options: { as?: string; taskId?: string; configurationId?: string } = {},
): Promise<{ runId: string; view: ResponseJson }> {
  const started = await runtime.client(options.as ?? 'editor').startRun({
    body: options.configurationId
      ? { configurationId: options.configurationId, input }
      : { taskId: options.taskId ?? 'page-metadata', input },
  });
  if (started.status !== 202 || !started.body) {
    throw new Error(`POST /runs answered ${started.status}: ${started.text}`);
  }
  const runId = started.body.runId;
  const view = await settle(runtime, runId, options.as ?? 'editor');
  return { runId, view };
}

/**
 * Waits until the run is no longer `running` and returns its view. After a decision, pass
 * the turn that was decided: a run still waiting at that turn has not picked it up yet.
 */
export async function settle(
  runtime: TestRuntime,
  runId: string,
  as = 'editor',
  decidedTurn?: number,
): Promise<ResponseJson> {
  return eventually(async () => {
    const response = await runtime.client(as).getRun({ path: { id: runId } });
    const view: ResponseJson = response.body;
    if (!view?.status || view.status === 'running') return undefined;
    if (decidedTurn !== undefined && view.status === 'waiting' && view.turn === decidedTurn) return undefined;
    return view;
  });
}
