import { CountersignError } from '../errors.js';
import type { RunDependencies } from '../run-dependencies.js';
import { sealJson, unsealJson } from '../sealed-json.js';
import { TEXTS } from '../texts.js';
import {
  CALL_RECORD_SCHEMA_VERSION,
  type CallRecord,
  type CallRecordExpectation,
  type CallResult,
  callResultSchema,
} from './call-record.js';
import type { ToolCallAttempt } from './run-tool-call.js';

/**
 * Attempts at an approved call before it ends "not applied" when each fails transiently. The
 * workflow's own retries of `countersign.unavailable` (lib/workflow-retries.ts) allow more, so
 * this bound, not theirs, decides (docs/runbook.md, "Retries").
 */
export const MAXIMUM_TOOL_ATTEMPTS = 3;

type LedgerDependencies = Pick<RunDependencies, 'runs' | 'sealer' | 'clock' | 'logger' | 'metrics'>;

/** One ExecuteTools attempt at one turn: the ledger as the attempt found it, and who it is. */
export interface CallLedger {
  readonly runId: string;
  readonly turn: number;
  /** New per attempt: a record written by another attempt is taken over only from that attempt. */
  readonly attemptId: string;
  /** The turn's records when the attempt began, by call index. */
  readonly records: ReadonlyMap<number, CallRecord>;
}

/** The call to run under the ledger: its place in the turn, its tool, and how to run it once. */
export interface LedgeredCall {
  readonly index: number;
  readonly tool: string;
  /** The tool declares that a second run with the same idempotency key applies nothing more. */
  readonly idempotent: boolean;
  readonly run: () => Promise<ToolCallAttempt>;
}

/**
 * Reads the ledger of a turn at the start of an attempt (one query).
 *
 * @example
 * const ledger = await openCallLedger(dependencies, { runId, turn, attemptId: newId() });
 */
export async function openCallLedger(
  dependencies: Pick<RunDependencies, 'runs'>,
  attempt: { runId: string; turn: number; attemptId: string },
): Promise<CallLedger> {
  const records = await dependencies.runs.listCallRecords(attempt.runId, attempt.turn);
  return { ...attempt, records: new Map(records.map((record) => [record.index, record])) };
}

/** The result of a call the ledger holds as run, unsealed; `undefined` when it has none. */
export async function readRecordedResult(
  dependencies: Pick<RunDependencies, 'sealer'>,
  ledger: CallLedger,
  index: number,
): Promise<CallResult | undefined> {
  const record = ledger.records.get(index);
  if (record?.state !== 'ran' || record.sealedResult === undefined) return undefined;
  return callResultSchema.parse(
    await unsealJson(dependencies.sealer, 'call-result', ledger.runId, record.sealedResult),
  );
}

/**
 * Runs an approved call at most once, and again only when that is safe:
 * - recorded as run: its recorded result, and the tool is not called;
 * - never taken, or `retrying` (an earlier attempt failed transiently and applied nothing): the
 *   call is taken (conditional write), run, and its result recorded;
 * - `started` by an attempt that never reported back: run again with the same idempotency key
 *   when the tool is `idempotent`; otherwise not run again, and recorded "outcome unknown";
 * - a transient failure is recorded `retrying` and fails the step as `unavailable` (the workflow
 *   retries it), until the call's MAXIMUM_TOOL_ATTEMPTS-th, which is recorded "not applied".
 * A ledger write that finds the record moved by another attempt fails the step as `unavailable`:
 * the retry reads the ledger afresh.
 *
 * @example
 * const result = await runLedgeredCall(dependencies, ledger, { index: 0, tool, idempotent, run });
 */
export async function runLedgeredCall(
  dependencies: LedgerDependencies,
  ledger: CallLedger,
  call: LedgeredCall,
): Promise<CallResult> {
  const existing = ledger.records.get(call.index);
  if (existing?.state === 'ran') {
    const recorded = await readRecordedResult(dependencies, ledger, call.index);
    if (recorded) return recorded;
  }
  const held: CallRecordExpectation = existing
    ? { kind: 'held', attemptId: existing.attemptId, state: existing.state }
    : { kind: 'absent' };
  const failures = existing?.transientFailures ?? 0;
  if (existing?.state === 'started' && !call.idempotent) {
    dependencies.logger.warn('tool outcome unknown: not run again', {
      runId: ledger.runId,
      turn: ledger.turn,
      tool: call.tool,
    });
    dependencies.metrics.count('ToolCalls', 1, { tool: call.tool, outcome: 'unknown' });
    const unknown: CallResult = { content: TEXTS.toolOutcomeUnknown(call.tool), isError: true };
    await writeRecord(dependencies, ledger, call, { state: 'ran', failures, result: unknown }, held);
    return unknown;
  }
  // Taken: from here this attempt is the one the ledger waits on.
  await writeRecord(dependencies, ledger, call, { state: 'started', failures }, held);
  const mine: CallRecordExpectation = { kind: 'held', attemptId: ledger.attemptId, state: 'started' };
  const attempt = await call.run();
  if (attempt.kind === 'ran') {
    await writeRecord(dependencies, ledger, call, { state: 'ran', failures, result: attempt.result }, mine);
    return attempt.result;
  }
  const failed = failures + 1;
  if (failed >= MAXIMUM_TOOL_ATTEMPTS) {
    const notApplied: CallResult = {
      content: TEXTS.toolNotApplied(call.tool, attempt.errorClass, failed),
      isError: true,
    };
    await writeRecord(
      dependencies,
      ledger,
      call,
      { state: 'ran', failures: failed, result: notApplied },
      mine,
    );
    return notApplied;
  }
  await writeRecord(dependencies, ledger, call, { state: 'retrying', failures: failed }, mine);
  throw new CountersignError('unavailable', TEXTS.toolRetried(call.tool, attempt.errorClass));
}

async function writeRecord(
  dependencies: LedgerDependencies,
  ledger: CallLedger,
  call: LedgeredCall,
  change: { state: CallRecord['state']; failures: number; result?: CallResult },
  expected: CallRecordExpectation,
): Promise<void> {
  const record: CallRecord = {
    schemaVersion: CALL_RECORD_SCHEMA_VERSION,
    runId: ledger.runId,
    turn: ledger.turn,
    index: call.index,
    tool: call.tool,
    state: change.state,
    attemptId: ledger.attemptId,
    updatedAt: dependencies.clock.now().toISOString(),
    transientFailures: change.failures,
    ...(change.result === undefined
      ? {}
      : { sealedResult: await sealJson(dependencies.sealer, 'call-result', ledger.runId, change.result) }),
  };
  const outcome = await dependencies.runs.putCallRecord(record, expected);
  if (outcome.kind === 'condition-failed') {
    // Another attempt moved this call on meanwhile: the step is tried again and reads it afresh.
    throw new CountersignError('unavailable', TEXTS.callTakenByAnotherAttempt);
  }
}
