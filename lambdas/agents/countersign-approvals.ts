import type { ApiClient, RawApiResponse } from '../contract/api-client.js';
import { externalRunViewSchema, submitExternalRunResponseSchema } from '../contract/external-schemas.js';
import { canonicalJson } from '../core/canonical-json.js';
import { CountersignError } from '../core/errors.js';
import type { ExternalRunView } from '../core/external-runs/external-answer.js';
import { TEXTS } from '../core/texts.js';
import { type ApprovalRequest, type ProposedCall, turnBodyOf } from './approval-turn.js';
import { refusalOf, sendIdempotent } from './countersign-requests.js';

export type { ApprovalRequest, ProposedCall } from './approval-turn.js';

/** The longest long poll the API holds (GET /external-runs/{id}?wait=25). */
const LONG_POLL_SECONDS = 25;
/** How long a request may take beyond what it asked the API to hold it. */
const REQUEST_MARGIN_SECONDS = 15;

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
    const submitted = submitExternalRunResponseSchema.safeParse(response.body);
    if (!submitted.success) throw refusalOf('submit the turn', response);
    return { runId: submitted.data.runId, repeated: submitted.data.repeated };
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
      const answer = externalRunViewSchema.safeParse(response.body);
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

/** Each call's verdict, once the answer is checked against the turn (same calls, same order). */
function verdictsOf(
  runId: string,
  request: ApprovalRequest,
  calls: NonNullable<ExternalRunView['calls']>,
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
