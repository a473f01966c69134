import { CountersignError, isCountersignError } from '../errors.js';
import type { StoredRun } from '../ports.js';
import type { RunDependencies } from './run-dependencies.js';
import { parseRunState, type RunState } from './run-state.js';
import { unsealJson } from './sealed-json.js';
import { reportSealedStateRejection } from './unopenable-card.js';

/** Reads a run or fails with `not-found`: a step for a run that does not exist is a bug, not input. */
export async function loadRun(
  dependencies: Pick<RunDependencies, 'runs'>,
  runId: string,
): Promise<StoredRun> {
  const run = await dependencies.runs.getRun(runId);
  if (!run) throw new CountersignError('not-found', 'Run not found.');
  return run;
}

/**
 * Unseals a run's working state; bytes sealed for another run or tampered with are refused,
 * and each refusal is reported (one log line, one `SealedStateRejections`).
 */
export async function unsealRunState(
  dependencies: Pick<RunDependencies, 'sealer'> & Partial<Pick<RunDependencies, 'logger' | 'metrics'>>,
  run: StoredRun,
): Promise<RunState> {
  try {
    const state = parseRunState(
      await unsealJson(dependencies.sealer, 'run-state', run.record.runId, run.sealedState),
    );
    if (state.runId !== run.record.runId) {
      throw new CountersignError('sealed-state-rejected', 'The sealed run state belongs to another run.');
    }
    return state;
  } catch (error) {
    if (isCountersignError(error, 'sealed-state-rejected') && dependencies.logger) {
      reportSealedStateRejection({ ...dependencies, logger: dependencies.logger }, run.record.runId, error);
    }
    throw error;
  }
}
