import { reportSealedStateRejection } from '../approvals/unopenable-card.js';
import { CountersignError, isCountersignError } from '../errors.js';
import type { StoredRun } from '../ports.js';
import type { RunDependencies } from '../run-dependencies.js';
import { unsealJson } from '../sealed-json.js';
import { TEXTS } from '../texts.js';
import { parseRunState, type RunState } from './run-state.js';

/** What unsealing a run's working state needs; a refusal is reported when a logger is given. */
export type StateUnsealingDependencies = Pick<RunDependencies, 'sealer'> &
  Partial<Pick<RunDependencies, 'logger' | 'metrics'>>;

/** Reads a run or fails with `not-found`: a step for a run that does not exist is a bug, not input. */
export async function loadRun(
  dependencies: Pick<RunDependencies, 'runs'> & Partial<Pick<RunDependencies, 'logger' | 'metrics'>>,
  runId: string,
): Promise<StoredRun> {
  // An overflowed state whose blob is missing or does not match its pointer is refused here.
  const run = await reportingRefusal(dependencies, runId, () => dependencies.runs.getRun(runId));
  if (!run) throw new CountersignError('not-found', TEXTS.runNotFound);
  return run;
}

/** Runs a read of a run's sealed data; a `sealed-state-rejected` is reported, then passed on. */
export async function reportingRefusal<Result>(
  dependencies: Partial<Pick<RunDependencies, 'logger' | 'metrics'>>,
  runId: string,
  read: () => Promise<Result>,
): Promise<Result> {
  try {
    return await read();
  } catch (error) {
    if (isCountersignError(error, 'sealed-state-rejected') && dependencies.logger) {
      reportSealedStateRejection({ ...dependencies, logger: dependencies.logger }, runId, error);
    }
    throw error;
  }
}

/**
 * The run's working state, or `undefined` when it is refused (reported): a reader that shows a
 * run goes on without it, so a refused state does not hide the run's status from its owner.
 */
export async function unsealRunStateUnlessRefused(
  dependencies: StateUnsealingDependencies,
  run: StoredRun,
): Promise<RunState | undefined> {
  try {
    return await unsealRunState(dependencies, run);
  } catch (error) {
    if (isCountersignError(error, 'sealed-state-rejected')) return undefined;
    throw error;
  }
}

/**
 * Unseals a run's working state; bytes sealed for another run or tampered with are refused,
 * and each refusal is reported (one log line, one `SealedStateRejections`).
 */
export async function unsealRunState(
  dependencies: StateUnsealingDependencies,
  run: StoredRun,
): Promise<RunState> {
  return reportingRefusal(dependencies, run.record.runId, async () => {
    const state = parseRunState(
      await unsealJson(dependencies.sealer, 'run-state', run.record.runId, run.sealedState),
    );
    if (state.runId !== run.record.runId) {
      throw new CountersignError('sealed-state-rejected', 'The sealed run state belongs to another run.');
    }
    return state;
  });
}
