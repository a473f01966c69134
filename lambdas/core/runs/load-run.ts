import { CountersignError } from '../errors.js';
import type { StoredRun } from '../ports.js';
import type { RunDependencies } from './run-dependencies.js';
import { parseRunState, type RunState } from './run-state.js';
import { unsealJson } from './sealed-json.js';

/** Reads a run or fails with `not-found`: a step for a run that does not exist is a bug, not input. */
export async function loadRun(
  dependencies: Pick<RunDependencies, 'runs'>,
  runId: string,
): Promise<StoredRun> {
  const run = await dependencies.runs.getRun(runId);
  if (!run) throw new CountersignError('not-found', 'Run not found.');
  return run;
}

/** Unseals a run's working state; bytes sealed for another run or tampered with are refused. */
export async function unsealRunState(
  dependencies: Pick<RunDependencies, 'sealer'>,
  run: StoredRun,
): Promise<RunState> {
  const state = parseRunState(
    await unsealJson(dependencies.sealer, 'run-state', run.record.runId, run.sealedState),
  );
  if (state.runId !== run.record.runId) {
    throw new CountersignError('sealed-state-rejected', 'The sealed run state belongs to another run.');
  }
  return state;
}
