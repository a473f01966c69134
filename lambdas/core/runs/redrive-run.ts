import { CountersignError } from '../errors.js';
import { isAdmin, type UserProfile } from '../identity.js';
import type { RunDependencies } from '../run-dependencies.js';
import type { RunRecord } from '../run-record.js';
import { TEXTS } from '../texts.js';

export type RedriveOutcome = {
  kind: 'redriven';
  runId: string;
  /** The status the run is back in: `waiting` when it failed while a decision was due or on record. */
  status: 'running' | 'waiting';
  /** The state that failed, where the run re-enters. */
  failedStep: string;
  /** How many times the run has been redriven, this one included. */
  redrives: number;
  redrivenBy: string;
  redrivenAt: string;
  /** True when this redrive was already made: the answer is that one's. */
  repeated: boolean;
};

export type RedriveRunDependencies = Pick<
  RunDependencies,
  'runs' | 'executions' | 'clock' | 'logger' | 'metrics'
>;

/** A run moves between statuses while a redrive is under way only if two race; a few rounds settle it. */
const MAXIMUM_ATTEMPTS = 5;

/**
 * POST /runs/{id}/redrive, by the run's owner or an admin (anyone else gets the 404 of an unknown
 * run): resumes a run that failed on a transient cause from the step that failed, in a new
 * execution (docs/runbook.md, "Redrive": why not Step Functions' RedriveExecution).
 *
 * 1. Only a `failed` run whose recorded failure is transient is redriven; any other is a 409
 *    saying why (not failed, failed before failures were recorded, or a cause another attempt
 *    would meet again).
 * 2. The run moves back to the status it failed in, only from `failed` (a conditional update),
 *    so two redrives race to one winner; its retention stops.
 * 3. Then a new execution starts, named after the redrive (`<run id>-redrive-<n>`): Prepare reads
 *    the run and re-enters where it stood. A waiting run's decision on record is carried out, a
 *    model reply on record is routed again, not asked for twice; nothing decided or executed
 *    runs again. A repeated request (200, the same outcome) starts the same name again, which
 *    also finishes a redrive whose start failed half-way.
 */
export async function redriveRun(
  dependencies: RedriveRunDependencies,
  principal: UserProfile,
  runId: string,
): Promise<RedriveOutcome> {
  for (let attempt = 0; attempt < MAXIMUM_ATTEMPTS; attempt += 1) {
    const record = await dependencies.runs.getRunRecord(runId);
    if (!record || (record.owner !== principal.userId && !isAdmin(principal))) {
      throw new CountersignError('not-found', TEXTS.runNotFound);
    }
    if (record.status !== 'failed') {
      const redriven = toRedriveOutcome(record, true);
      if (!redriven) throw new CountersignError('conflict', TEXTS.redriveNotFailed(record.status));
      await startRedrive(dependencies, runId, redriven.redrives);
      return redriven;
    }
    const failure = record.failure;
    if (!failure) throw new CountersignError('conflict', TEXTS.redriveUnrecorded);
    if (!failure.transient) {
      throw new CountersignError('conflict', TEXTS.redriveNotTransient(failure.step, failure.error));
    }
    const now = dependencies.clock.now().toISOString();
    const redrive = { count: (record.redrive?.count ?? 0) + 1, by: principal.userId, at: now };
    const outcome = await dependencies.runs.updateRun(
      runId,
      { status: failure.resumeAs, redrive, updatedAt: now },
      { expectStatus: ['failed'], removeFields: ['endedAt', 'failureReason'] },
    );
    if (outcome.kind === 'condition-failed') continue; // another redrive won: read it again
    await startRedrive(dependencies, runId, redrive.count);
    dependencies.metrics.count('RunsRedriven');
    dependencies.logger.info('run redriven', {
      runId,
      failedStep: failure.step,
      turn: failure.turn,
      error: failure.error,
      redrives: redrive.count,
    });
    const redriven = toRedriveOutcome({ ...record, status: failure.resumeAs, redrive }, false);
    if (redriven) return redriven;
  }
  throw new CountersignError('conflict', TEXTS.redriveKeptChanging);
}

/** The execution a redrive starts: its name makes a repeated start of the same redrive harmless. */
function startRedrive(dependencies: RedriveRunDependencies, runId: string, redrives: number): Promise<void> {
  return dependencies.executions.start({ runId, executionName: `${runId}-redrive-${redrives}` });
}

/**
 * The outcome of the run's last redrive, when it is the latest thing that happened to the run
 * (made after its last failure, and the run is still in the status it put it back in or later).
 */
function toRedriveOutcome(record: RunRecord, repeated: boolean): RedriveOutcome | undefined {
  const { failure, redrive } = record;
  if (!failure || !redrive || redrive.at < failure.failedAt) return undefined;
  if (record.status !== 'running' && record.status !== 'waiting') return undefined;
  return {
    kind: 'redriven',
    runId: record.runId,
    status: record.status,
    failedStep: failure.step,
    redrives: redrive.count,
    redrivenBy: redrive.by,
    redrivenAt: redrive.at,
    repeated,
  };
}
