import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The identifiers of one invocation (an API request or a state machine step) that every log
 * line it writes carries. Identifiers only: never a token, an argument or a text.
 */
export interface InvocationFields {
  /** API: the API Gateway request id. Steps: the execution id (ARN). */
  readonly correlationId: string;
  readonly runId?: string;
  readonly executionId?: string;
  readonly turn?: number;
  /** The state machine state (`AwaitApproval`) or the API route key (`POST /runs`). */
  readonly operation?: string;
}

/** Something that buffers per invocation and must write out when the invocation ends. */
export interface InvocationFlusher {
  flush(): void;
}

interface InvocationScope {
  readonly fields: InvocationFields;
  readonly flushers: Set<InvocationFlusher>;
}

// One store per process: a long-lived local process serves many runs at once, and each
// request or step must see its own fields and its own metrics, never a neighbour's.
const storage = new AsyncLocalStorage<InvocationScope>();

/**
 * Runs `work` as one invocation: its log lines carry `fields`, and whatever buffered metrics
 * in it are flushed when it ends, thrown or not. A Lambda handler and a local request or step
 * go through this same function, so the local mode logs and meters like the deployed one.
 *
 * @example
 * await runInInvocationScope({ correlationId: event.requestContext.requestId }, () => route(event));
 */
export async function runInInvocationScope<Result>(
  fields: InvocationFields,
  work: () => Promise<Result>,
): Promise<Result> {
  const scope: InvocationScope = { fields: withoutUndefined(fields), flushers: new Set() };
  try {
    return await storage.run(scope, work);
  } finally {
    for (const flusher of scope.flushers) flusher.flush();
  }
}

/** The fields of the invocation the caller runs in, or none outside any. */
export function currentInvocationFields(): Readonly<Record<string, unknown>> {
  return { ...storage.getStore()?.fields };
}

/**
 * Registers `flusher` to be flushed when the current invocation ends. Returns false outside
 * any invocation (the caller then writes at once).
 */
export function flushWhenInvocationEnds(flusher: InvocationFlusher): boolean {
  const scope = storage.getStore();
  if (!scope) return false;
  scope.flushers.add(flusher);
  return true;
}

/** The key a flusher buffers the current invocation's entries under. */
export function currentInvocationKey(): object | undefined {
  return storage.getStore();
}

function withoutUndefined(fields: InvocationFields): InvocationFields {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  ) as unknown as InvocationFields;
}
