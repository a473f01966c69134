import * as z from 'zod/mini';
import type { ApiClient, RawApiResponse } from '../contract/api-client.js';
import { canonicalJson } from '../core/canonical-json.js';
import { CountersignError, type ErrorCode } from '../core/errors.js';
import {
  type DeclaredEffect,
  type SubmitExternalRunRequest,
  submitExternalRunRequestSchema,
} from '../core/external-runs/external-turn.js';
import { nestsDeeperThan } from '../core/json-depth.js';
import { MAX_TURN_ARGUMENTS_BYTES, MAX_TURN_ARGUMENTS_DEPTH } from '../core/runs/take-model-turn.js';
import { formatSchemaIssues } from '../core/schema-messages.js';
import { TEXTS } from '../core/texts.js';

/** The longest long poll the API holds (GET /external-runs/{id}?wait=25). */
const LONG_POLL_SECONDS = 25;
/** How long a request may take beyond what it asked the API to hold it. */
const REQUEST_MARGIN_SECONDS = 15;
/** Attempts of one request that met a transient failure (network, 5xx): each is idempotent. */
const ATTEMPTS = 3;
/** An SDK's call id, echoed on the card and in the answer: printable ASCII, no spaces. */
const CALL_ID_PATTERN = /^[\x21-\x7e]{1,200}$/;

/** One call an agent proposes, as its SDK gave it. */
export interface ProposedCall {
  readonly tool: string;
  /** The model's arguments: a JSON object (checked before anything is sent). */
  readonly arguments: unknown;
  /** The SDK's id of the call (echoed in the answer). @default - `call-<index>` */
  readonly callId?: string;
  /** Lines the caller computed to preview the call, flagged on the card as supplied by the caller. */
  readonly preview?: readonly string[];
}

/** A turn to countersign: the calls that need approval, under a configuration's policy. */
export interface ApprovalRequest {
  readonly configurationId: string;
  /** One per turn, the same on every retry of it: a retry finds the run the first attempt started. */
  readonly clientKey: string;
  readonly summary?: string;
  /**
   * Each tool once, with its effect; `editable` lets an approver correct its calls' arguments
   * (the answer then says what to run), for an agent that can run them (LangGraph).
   */
  readonly tools: ReadonlyArray<{
    readonly name: string;
    readonly effect: DeclaredEffect;
    readonly editable?: boolean;
  }>;
  readonly calls: readonly ProposedCall[];
}

/**
 * The answer for one call, by its position in the turn. An approved call carries the arguments to
 * run: the model's, or an approver's edit of them (then `edited` says who).
 */
export type CallVerdict =
  | {
      readonly decision: 'approved';
      readonly index: number;
      readonly callId: string;
      readonly tool: string;
      readonly arguments: Record<string, unknown>;
      readonly edited?: { readonly by: string };
    }
  | {
      readonly decision: 'rejected';
      readonly index: number;
      readonly callId: string;
      readonly tool: string;
      readonly reason?: string;
    };

export interface CountersignAnswer {
  readonly runId: string;
  /** Every call's verdict, in the order submitted. */
  readonly calls: readonly CallVerdict[];
}

export interface WaitOptions {
  /** Stops waiting (and any request in flight) with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * How long to wait for the answer in all: past it, an `approval-timeout` error whose details
   * name the run, which still waits on its card.
   * @default - the approvals' `maxWaitSeconds`
   */
  readonly maxWaitSeconds?: number;
}

/** What an adapter is given for each turn it submits (the OpenAI Agents SDK's, the AI SDK's). */
export interface SdkTurnOptions extends WaitOptions {
  readonly approvals: CountersignApprovals;
  /** The configuration whose policy the turn is decided under. */
  readonly configurationId: string;
  /** One per turn, stable across retries of it (e.g. your conversation id and turn number). */
  readonly clientKey: string;
  /** What the turn is for, shown on the card. */
  readonly summary?: string;
  /** A tool whose effect you have not confirmed is shown so. @default - every tool is a `write` */
  readonly effects?: Readonly<Record<string, 'write' | 'unknown'>>;
  /** Lines you computed to preview a call, flagged on the card as supplied by the caller. */
  readonly previewOf?: (call: { tool: string; arguments: unknown }) => readonly string[] | undefined;
}

/**
 * The turn of an SDK's held calls: each tool declared once, with its effect; the caller's
 * previews. No tool is declared editable: these SDKs run the model's arguments only.
 */
export function approvalRequestOf(
  calls: ReadonlyArray<Omit<ProposedCall, 'preview'>>,
  options: SdkTurnOptions,
): ApprovalRequest {
  return {
    configurationId: options.configurationId,
    clientKey: options.clientKey,
    ...(options.summary === undefined ? {} : { summary: options.summary }),
    tools: [...new Set(calls.map((call) => call.tool))].map((name) => ({
      name,
      effect: options.effects?.[name] ?? 'write',
    })),
    calls: calls.map((call) => {
      const preview = options.previewOf?.({ tool: call.tool, arguments: call.arguments });
      return preview === undefined ? call : { ...call, preview };
    }),
  };
}

export interface ExecutionReport {
  readonly index: number;
  readonly outcome: 'succeeded' | 'failed' | 'skipped';
  readonly detail?: string;
}

export interface CountersignApprovals {
  /** Submits the turn and waits for its answer (one card, every call answered). */
  requestApproval(request: ApprovalRequest, options?: WaitOptions): Promise<CountersignAnswer>;
  /** Submits the turn (idempotent by its client key) and returns its run id. */
  submitTurn(request: ApprovalRequest, options?: WaitOptions): Promise<{ runId: string; repeated: boolean }>;
  /** Waits by long poll for the answer of a run this client submitted with `request`. */
  awaitAnswer(runId: string, request: ApprovalRequest, options?: WaitOptions): Promise<CountersignAnswer>;
  /** Reports what ran, for the audit (each call's first report stands). */
  reportExecution(
    runId: string,
    reports: readonly ExecutionReport[],
    options?: Pick<WaitOptions, 'signal'>,
  ): Promise<void>;
}

export interface CountersignApprovalsOptions {
  /** The typed API client of the machine client (`createApiClient` with `clientCredentialsTokens`). */
  readonly api: ApiClient;
  /** @default 3600 (an hour); a call's own `maxWaitSeconds` overrides it */
  readonly maxWaitSeconds?: number;
  /** How long a request may take beyond what it asks the API to hold it. @default 15 */
  readonly requestMarginSeconds?: number;
  /** The pause before the first retry of a request that met a transient failure, doubled after. @default 1 */
  readonly retryPauseSeconds?: number;
  /** @default - the system time, in epoch milliseconds */
  readonly now?: () => number;
}

/** An answered call as GET /external-runs/{id} gives it, with the edit fields an approver's edit adds. */
const answeredCallSchema = z.object({
  index: z.number(),
  callId: z.string(),
  tool: z.string(),
  decision: z.enum(['approved', 'rejected']),
  reason: z.optional(z.string()),
  arguments: z.optional(z.record(z.string(), z.unknown())),
  edited: z.optional(z.object({ by: z.string() })),
});
const answerSchema = z.object({
  runId: z.string(),
  status: z.string(),
  reason: z.optional(z.string()),
  calls: z.optional(z.array(answeredCallSchema)),
});

/**
 * What the SDK adapters share (`countersign/agents/openai`, `/langgraph`, `/ai-sdk`): a turn
 * checked and bounded before it is sent, submitted through the typed client, its answer awaited
 * by long poll, what ran reported. It fails closed: a network failure, a 5xx after retries, a
 * timeout, a run that ended without a decision or an answer that does not match the turn is a
 * `CountersignError`, never a verdict, so no adapter runs a call on it. Messages name what
 * happened (a status, an error code), never a token.
 *
 * @example
 * const approvals = createCountersignApprovals({ api: createApiClient({ baseUrl, token }) });
 * const answer = await approvals.requestApproval({ configurationId: 'billing-agent', clientKey, tools, calls });
 */
export function createCountersignApprovals(options: CountersignApprovalsOptions): CountersignApprovals {
  const now = options.now ?? Date.now;
  const margin = options.requestMarginSeconds ?? REQUEST_MARGIN_SECONDS;
  const send = (
    action: string,
    request: (signal: AbortSignal) => Promise<RawApiResponse>,
    signal: AbortSignal | undefined,
    holdSeconds = 0,
  ) =>
    sendIdempotent(action, request, {
      signal,
      timeoutSeconds: holdSeconds + margin,
      pauseSeconds: options.retryPauseSeconds ?? 1,
    });
  const submitTurn: CountersignApprovals['submitTurn'] = async (request, waitOptions = {}) => {
    const body = turnBodyOf(request);
    const response = await send(
      'submit the turn',
      (signal) => options.api.submitExternalRun({ body, signal }),
      waitOptions.signal,
    );
    if (response.status !== 202) throw refusalOf('submit the turn', response);
    const submitted = z
      .object({ runId: z.string().check(z.minLength(1)), repeated: z.boolean() })
      .safeParse(response.body);
    if (!submitted.success) throw refusalOf('submit the turn', response);
    return submitted.data;
  };
  const awaitAnswer: CountersignApprovals['awaitAnswer'] = async (runId, request, waitOptions = {}) => {
    const maxWaitSeconds = waitOptions.maxWaitSeconds ?? options.maxWaitSeconds ?? 3_600;
    const deadline = now() + maxWaitSeconds * 1_000;
    for (;;) {
      // Rounded up: a last poll holds to the deadline instead of spinning with wait=0 until it.
      const wait = Math.max(0, Math.min(LONG_POLL_SECONDS, Math.ceil((deadline - now()) / 1_000)));
      const response = await send(
        'read the answer',
        (signal) => options.api.getExternalRun({ path: { id: runId }, query: { wait }, signal }),
        waitOptions.signal,
        wait,
      );
      if (response.status !== 200) throw refusalOf('read the answer', response);
      const answer = answerSchema.safeParse(response.body);
      if (!answer.success || answer.data.runId !== runId) {
        throw new CountersignError('internal', TEXTS.agentAnswerMismatch(runId), { details: { runId } });
      }
      const { status, reason, calls } = answer.data;
      if (status === 'decided') return { runId, calls: verdictsOf(runId, request, calls ?? []) };
      if (status !== 'pending') {
        throw new CountersignError('gone', TEXTS.agentRunEnded(runId, status, reason), {
          details: { runId, status },
        });
      }
      if (now() >= deadline) {
        throw new CountersignError('approval-timeout', TEXTS.agentWaitElapsed(runId, maxWaitSeconds), {
          details: { runId },
        });
      }
    }
  };
  return {
    submitTurn,
    awaitAnswer,
    requestApproval: async (request, waitOptions = {}) => {
      const { runId } = await submitTurn(request, waitOptions);
      return awaitAnswer(runId, request, waitOptions);
    },
    reportExecution: async (runId, reports, waitOptions = {}) => {
      const body = { reports: reports.map((report) => ({ ...report })) };
      const response = await send(
        'record what ran',
        (signal) => options.api.reportExternalExecution({ path: { id: runId }, body, signal }),
        waitOptions.signal,
      );
      if (response.status !== 200) throw refusalOf('record what ran', response);
    },
  };
}

/**
 * Reports named by the SDK's call ids (what its results name: a `tool-result`'s `toolCallId`,
 * a tool output item's `callId`), each at its call's index in the answer; an id the answer does
 * not hold is left out. A call the SDK ran that was not approved is reported all the same: the
 * audit flags it.
 *
 * @example
 * await approvals.reportExecution(answer.runId, reportsByCallId(answer, [{ callId: 'call_1', outcome: 'succeeded' }]));
 */
export function reportsByCallId(
  answer: CountersignAnswer,
  executions: ReadonlyArray<{ readonly callId: string } & Omit<ExecutionReport, 'index'>>,
): ExecutionReport[] {
  return executions.flatMap(({ callId, ...report }) => {
    const verdict = answer.calls.find((call) => call.callId === callId);
    return verdict === undefined ? [] : [{ ...report, index: verdict.index }];
  });
}

/** The request body of a turn, every value checked against the API's own schema and bounds first. */
export function turnBodyOf(request: ApprovalRequest): SubmitExternalRunRequest {
  const problems: string[] = [];
  const calls = request.calls.map((call, index) => {
    const field = `calls[${index}]`;
    const argumentsObject = jsonObjectOf(call.arguments);
    if (argumentsObject === undefined) problems.push(`${field}.arguments: not a JSON object`);
    else if (nestsDeeperThan(argumentsObject, MAX_TURN_ARGUMENTS_DEPTH)) {
      problems.push(`${field}.arguments: nested more than ${MAX_TURN_ARGUMENTS_DEPTH} levels deep`);
    }
    if (call.callId !== undefined && !CALL_ID_PATTERN.test(call.callId)) {
      problems.push(`${field}.callId: 1 to 200 printable characters without spaces`);
    } else if (
      call.callId !== undefined &&
      request.calls.findIndex((other) => other.callId === call.callId) < index
    ) {
      // Reports and answers are matched by call id: two calls may not share one.
      problems.push(`${field}.callId: the same as an earlier call's`);
    }
    return {
      tool: call.tool,
      arguments: argumentsObject ?? {},
      ...(call.callId === undefined ? {} : { callId: call.callId }),
      ...(call.preview === undefined ? {} : { preview: [...call.preview] }),
    };
  });
  const argumentsBytes = calls.reduce(
    (total, call) => total + Buffer.byteLength(JSON.stringify(call.arguments)),
    0,
  );
  if (argumentsBytes > MAX_TURN_ARGUMENTS_BYTES) {
    problems.push(`calls: arguments of ${argumentsBytes} bytes, more than ${MAX_TURN_ARGUMENTS_BYTES}`);
  }
  const body = {
    configurationId: request.configurationId,
    clientKey: request.clientKey,
    ...(request.summary === undefined ? {} : { summary: request.summary }),
    tools: request.tools.map((tool) => ({
      name: tool.name,
      effect: tool.effect,
      ...(tool.editable ? { editable: true } : {}),
    })),
    calls,
  };
  const parsed = submitExternalRunRequestSchema.safeParse(body);
  if (!parsed.success) problems.push(formatSchemaIssues(parsed.error.issues));
  if (problems.length > 0 || !parsed.success) {
    throw new CountersignError('bad-request', TEXTS.agentTurnInvalid(problems.join('; ')));
  }
  return parsed.data;
}

/** The value as a plain JSON object (a copy, as JSON carries it), or undefined. */
function jsonObjectOf(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  try {
    const copy: unknown = JSON.parse(JSON.stringify(value));
    return typeof copy === 'object' && copy !== null && !Array.isArray(copy)
      ? (copy as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Each call's verdict, once the answer is checked against the turn (same calls, same order). */
function verdictsOf(
  runId: string,
  request: ApprovalRequest,
  calls: ReadonlyArray<z.output<typeof answeredCallSchema>>,
): CallVerdict[] {
  const submitted = turnBodyOf(request).calls;
  const matches =
    calls.length === submitted.length &&
    calls.every((call, index) => call.index === index && call.tool === submitted[index]?.tool);
  if (!matches)
    throw new CountersignError('internal', TEXTS.agentAnswerMismatch(runId), { details: { runId } });
  return calls.map((call, index): CallVerdict => {
    const base = { index, callId: call.callId, tool: call.tool };
    if (call.decision === 'rejected') {
      return { decision: 'rejected', ...base, ...(call.reason === undefined ? {} : { reason: call.reason }) };
    }
    const proposed = submitted[index]?.arguments ?? {};
    const toRun = call.arguments ?? proposed;
    // Other arguments than proposed are an edit even if the answer forgot to say so.
    const edited =
      call.edited ?? (canonicalJson(toRun) === canonicalJson(proposed) ? undefined : { by: 'an approver' });
    return { decision: 'approved', ...base, arguments: toRun, ...(edited ? { edited } : {}) };
  });
}

/**
 * One request, sent again on a transient failure (no answer, a timeout, a 5xx): every request
 * here is idempotent (a client key, a read, a first-report-stands report).
 */
async function sendIdempotent(
  action: string,
  send: (signal: AbortSignal) => Promise<RawApiResponse>,
  options: { signal: AbortSignal | undefined; timeoutSeconds: number; pauseSeconds: number },
): Promise<RawApiResponse> {
  const { signal, timeoutSeconds } = options;
  let failure: CountersignError | undefined;
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    if (attempt > 0) await pause(Math.ceil(2 ** (attempt - 1) * options.pauseSeconds * 1_000), signal);
    signal?.throwIfAborted();
    const timeout = AbortSignal.timeout(Math.ceil(timeoutSeconds * 1_000));
    try {
      const response = await send(signal ? AbortSignal.any([signal, timeout]) : timeout);
      if (response.status < 500) return response;
      failure = new CountersignError('unavailable', TEXTS.agentCountersignFailing(action, response.status));
    } catch (error) {
      signal?.throwIfAborted();
      const problem = timeout.aborted ? `no answer within ${timeoutSeconds} s` : formatFailure(error);
      failure = new CountersignError('unavailable', TEXTS.agentCountersignUnreachable(action, problem));
    }
  }
  throw failure;
}

/** A refusal (4xx) with the API's own message, written for clients; the code follows the status. */
function refusalOf(action: string, response: RawApiResponse): CountersignError {
  const message = z.object({ error: z.object({ message: z.string() }) }).safeParse(response.body);
  return new CountersignError(
    CODE_BY_STATUS[response.status] ?? 'internal',
    TEXTS.agentCountersignRefused(
      action,
      response.status,
      message.success ? message.data.error.message : 'an unexpected answer',
    ),
  );
}

const CODE_BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'bad-request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not-found',
  409: 'conflict',
  410: 'gone',
  413: 'payload-too-large',
  429: 'too-many-requests',
};

/** What failed, by name and code only: a message may quote a URL or a server's text. */
function formatFailure(error: unknown): string {
  const named = error as { name?: unknown; code?: unknown; error?: unknown; cause?: { code?: unknown } };
  const code = [named.code, named.error, named.cause?.code].find((value) => typeof value === 'string');
  const name = typeof named.name === 'string' ? named.name : 'Error';
  return code === undefined ? name : `${name} ${code}`;
}

function pause(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, milliseconds);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
