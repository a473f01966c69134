import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../../lambdas/local/embedded-runtime.js';
import { synthesizeStateMachineDefinition } from '../../lib/state-machine-definition.js';

let definition: Record<string, unknown> | undefined;

/** JSON bodies in tests are asserted field by field; typing each response would only restate the API. */
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
  request(
    method: string,
    path: string,
    options?: { as?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; json: ResponseJson; text: string }>;
}

/** A test runtime that also captured its metrics. */
export interface MeteredTestRuntime extends TestRuntime {
  /** Every EMF metric document the runtime wrote, one JSON line each. */
  readonly metricLines: string[];
}

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
  });
  return {
    ...runtime,
    baseDirectory,
    logLines,
    metricLines,
    async request(method, path, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      if (requestOptions.as) headers.authorization = `Bearer ${runtime.tokens[requestOptions.as]}`;
      if (requestOptions.body !== undefined) headers['content-type'] ??= 'application/json';
      const response = await fetch(`${runtime.url}${path}`, {
        method,
        headers,
        ...(requestOptions.body !== undefined
          ? {
              body:
                typeof requestOptions.body === 'string'
                  ? requestOptions.body
                  : JSON.stringify(requestOptions.body),
            }
          : {}),
      });
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, json, text };
    },
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
  const started = await runtime.request('POST', '/runs', {
    as: options.as ?? 'editor',
    body: options.configurationId
      ? { configurationId: options.configurationId, input }
      : { taskId: options.taskId ?? 'page-metadata', input },
  });
  if (started.status !== 202) throw new Error(`POST /runs answered ${started.status}: ${started.text}`);
  const runId = started.json.runId as string;
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
    const response = await runtime.request('GET', `/runs/${runId}`, { as });
    const view = response.json;
    if (!view?.status || view.status === 'running') return undefined;
    if (decidedTurn !== undefined && view.status === 'waiting' && view.turn === decidedTurn) return undefined;
    return view;
  });
}
