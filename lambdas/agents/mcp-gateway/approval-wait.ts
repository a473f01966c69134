import type { ApiClient } from '../../contract/api-client.js';
import { externalRunViewSchema } from '../../contract/external-schemas.js';
import { MAX_EXTERNAL_WAIT_SECONDS } from '../../core/external-runs/await-external-answer.js';
import type { DeclaredEffect } from '../../core/external-runs/external-turn.js';

/** What countersign answered for one gateway call, read from its external run. */
export type ApprovalAnswer =
  /** `editedBy`: an approver changed the arguments; `arguments` are theirs, the ones approved. */
  | { kind: 'approved'; runId: string; arguments: Record<string, unknown>; editedBy?: string }
  /** Approved, and a report of it is on record: it ran already, it must not run twice. */
  | { kind: 'already-run'; runId: string; outcome: string }
  | { kind: 'rejected'; runId: string; reason?: string }
  | { kind: 'not-decided'; runId: string; status: 'expired' | 'cancelled' | 'failed'; reason?: string }
  /** Still pending at the caller's deadline. */
  | { kind: 'waiting'; runId: string }
  /** countersign refused the turn (a 4xx): its message names what is wrong. */
  | { kind: 'refused'; status: number; message?: string }
  /** countersign could not be reached, or failed: nothing is on record as approved. */
  | { kind: 'unavailable' };

export interface ApprovalRequest {
  readonly configurationId: string;
  readonly clientKey: string;
  readonly tool: string;
  readonly effect: Exclude<DeclaredEffect, 'read'>;
  /** Whether an approver may edit the arguments (the answer then carries the ones to run). */
  readonly editable: boolean;
  readonly arguments: Record<string, unknown>;
  readonly summary: string;
}

export interface ApprovalWaitOptions {
  /** When to stop waiting, in epoch milliseconds. */
  readonly deadline: number;
  /** The longest single long poll, in seconds (at most 25): progress is sent between polls. */
  readonly pollSeconds: number;
  readonly now: () => number;
  /** Called once the card exists and after each poll that found the run pending (progress). */
  readonly onPending?: (runId: string) => Promise<void>;
  /** The client gave up (cancelled, disconnected): stop waiting, the run stays as it is. */
  readonly signal?: AbortSignal;
}

/**
 * Submits one call as an external run's turn (the client key makes a repeat reach the same run)
 * and long-polls its answer until it is decided or the deadline passes. Any failure to reach
 * countersign is `unavailable`: the caller then runs nothing (fail closed).
 *
 * @example
 * const answer = await submitAndAwaitApproval(api, request, { deadline: Date.now() + 45_000, pollSeconds: 15, now: Date.now });
 * if (answer.kind === 'approved') await upstream.callTool(server, request.tool, answer.arguments);
 */
export async function submitAndAwaitApproval(
  api: ApiClient,
  request: ApprovalRequest,
  options: ApprovalWaitOptions,
): Promise<ApprovalAnswer> {
  try {
    const submitted = await api.submitExternalRun({
      body: {
        configurationId: request.configurationId,
        clientKey: request.clientKey,
        summary: request.summary,
        tools: [
          { name: request.tool, effect: request.effect, ...(request.editable ? { editable: true } : {}) },
        ],
        calls: [{ tool: request.tool, arguments: request.arguments }],
      },
    });
    if (!submitted.ok) {
      return submitted.status >= 500 || submitted.status === 401
        ? { kind: 'unavailable' }
        : { kind: 'refused', status: submitted.status, ...messageOf(submitted.body) };
    }
    const runId = submitted.body?.runId;
    if (runId === undefined) return { kind: 'unavailable' };
    // The first progress names the run as soon as its card exists.
    await options.onPending?.(runId);
    for (;;) {
      const remainingSeconds = Math.floor((options.deadline - options.now()) / 1000);
      const wait = Math.max(0, Math.min(options.pollSeconds, MAX_EXTERNAL_WAIT_SECONDS, remainingSeconds));
      const polled = await api.getExternalRun({ path: { id: runId }, query: { wait } });
      if (!polled.ok) return { kind: 'unavailable' };
      // Nobody reads an answer now: the next call of the same call picks the run up where it is.
      if (options.signal?.aborted) return { kind: 'waiting', runId };
      const answer = answerOf(runId, polled.body, request.arguments);
      if (answer.kind !== 'waiting' || remainingSeconds <= 0) return answer;
      await options.onPending?.(runId);
    }
  } catch {
    // A network failure or a token the issuer would not grant: no approval is on record.
    return { kind: 'unavailable' };
  }
}

/**
 * The answer a run's view gives for its one call, for the arguments the caller submitted. The
 * body is read as the contract says, and of this run only: anything else approves nothing.
 */
export function answerOf(
  runId: string,
  body: unknown,
  submittedArguments: Record<string, unknown>,
): ApprovalAnswer {
  const parsed = externalRunViewSchema.safeParse(body);
  if (!parsed.success || parsed.data.runId !== runId) return { kind: 'unavailable' };
  const view = parsed.data;
  if (view.status === 'pending') return { kind: 'waiting', runId };
  if (view.status !== 'decided') {
    return {
      kind: 'not-decided',
      runId,
      status: view.status,
      ...(view.reason ? { reason: view.reason } : {}),
    };
  }
  const call = view.calls?.find((each) => each.index === 0);
  if (call?.decision !== 'approved') {
    const reason = call?.reason ?? view.reason;
    return { kind: 'rejected', runId, ...(reason ? { reason } : {}) };
  }
  const report = view.reports.find((each) => each.index === 0);
  if (report !== undefined) return { kind: 'already-run', runId, outcome: report.outcome };
  // An answer that names the arguments to run (an approver's edit) is what was approved.
  if (call.arguments !== undefined) {
    return { kind: 'approved', runId, arguments: call.arguments, editedBy: call.edited?.by ?? 'an approver' };
  }
  return { kind: 'approved', runId, arguments: submittedArguments };
}

/** The API's own 4xx message (it names the field, never a secret). */
function messageOf(body: unknown): { message?: string } {
  const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === 'string' ? { message: message.slice(0, 500) } : {};
}
