import { STEP_ERROR_PREFIX } from '../errors.js';
import type { RunDependencies } from '../run-dependencies.js';
import type { RunFailure } from '../run-record.js';
import { TEXTS } from '../texts.js';

export type EndRunDependencies = Pick<RunDependencies, 'runs' | 'clock' | 'logger' | 'metrics' | 'settings'>;

const OPEN_STATUSES = ['running', 'waiting'] as const;

/** The run gave its final answer. */
export async function finishRun(dependencies: EndRunDependencies, input: { runId: string }): Promise<void> {
  const now = dependencies.clock.now().toISOString();
  const outcome = await dependencies.runs.updateRun(
    input.runId,
    { status: 'completed', endedAt: now, updatedAt: now },
    { expectStatus: ['running'] },
  );
  if (outcome.kind === 'written') dependencies.metrics.count('RunsCompleted');
  dependencies.logger.info('run completed', { runId: input.runId });
}

/**
 * The failure the state machine caught. Our own step errors are named `countersign.<code>`
 * and carry a client-safe message; anything else is reported generically (its cause may hold
 * text nobody vetted).
 */
export interface CaughtFailure {
  Error?: string;
  Cause?: string;
}

/**
 * Where the failure happened and what it was, as the state machine's catch names it: the state
 * that failed (each catch passes through a `<state> failed` Pass state that says which) and
 * whether its error is one a later attempt may not meet (lambdas/contract/state-names.ts).
 */
export interface FailedStep {
  step: string;
  transient: boolean;
}

export async function markRunFailed(
  dependencies: EndRunDependencies,
  input: { runId: string; failure?: CaughtFailure; failedStep?: FailedStep },
): Promise<void> {
  const reason = readableReason(input.failure);
  const now = dependencies.clock.now().toISOString();
  // The status and turn it failed in: a redrive puts the run back there (a waiting run's
  // decision on record is then carried out, never asked for again).
  const record = await dependencies.runs.getRunRecord(input.runId);
  const resumeAs = record?.status === 'waiting' ? 'waiting' : 'running';
  const failure: RunFailure = {
    step: input.failedStep?.step ?? 'unknown',
    turn: record?.turn ?? 0,
    error: formatErrorName(input.failure?.Error),
    transient: input.failedStep?.transient ?? false,
    resumeAs,
    failedAt: now,
  };
  const outcome = await dependencies.runs.updateRun(
    input.runId,
    { status: 'failed', failureReason: reason, failure, endedAt: now, updatedAt: now },
    { expectStatus: OPEN_STATUSES, removeFields: ['pendingToolNames'] },
  );
  if (outcome.kind === 'written') {
    await dependencies.runs.closeCard(input.runId, 'failed');
    dependencies.metrics.count('RunsFailed');
  }
  dependencies.logger.warn('run failed', {
    runId: input.runId,
    error: failure.error,
    failedStep: failure.step,
    turn: failure.turn,
    transient: failure.transient,
  });
}

/** The caught error's name if it is a plain name (`States.Timeout`, `countersign.internal`), else `unknown`. */
function formatErrorName(error: string | undefined): string {
  return error !== undefined && /^[A-Za-z][A-Za-z0-9._-]{0,127}$/.test(error) ? error : 'unknown';
}

export async function markRunExpired(
  dependencies: EndRunDependencies,
  input: { runId: string },
): Promise<void> {
  const now = dependencies.clock.now().toISOString();
  const outcome = await dependencies.runs.updateRun(
    input.runId,
    {
      status: 'expired',
      failureReason: TEXTS.expired(dependencies.settings.approvalTimeoutSeconds),
      endedAt: now,
      updatedAt: now,
    },
    { expectStatus: OPEN_STATUSES },
  );
  if (outcome.kind === 'written') {
    await dependencies.runs.closeCard(input.runId, 'expired');
    dependencies.metrics.count('RunsExpired');
  }
  dependencies.logger.info('run expired', { runId: input.runId });
}

function readableReason(failure: CaughtFailure | undefined): string {
  const error = failure?.Error ?? '';
  if (!error.startsWith(STEP_ERROR_PREFIX)) return TEXTS.internalFailure;
  const message = messageOf(failure?.Cause);
  return message ? message.slice(0, 500) : TEXTS.internalFailure;
}

/** Lambda wraps a thrown error as `{"errorType","errorMessage",...}`; the local runner passes the text. */
function messageOf(cause: string | undefined): string | undefined {
  if (!cause) return undefined;
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    return typeof parsed.errorMessage === 'string' ? parsed.errorMessage : undefined;
  } catch {
    return cause;
  }
}
