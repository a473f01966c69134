import * as z from 'zod/mini';
import { STATE_NAMES } from '../../contract/state-names.js';
import { prepareRun } from '../../core/runs/prepare-run.js';
import { defineStep, runIdSchema, type StepDependencies } from './define-step.js';

/** The `Prepare` step: the run store only. */
export function createPrepareStep(dependencies: StepDependencies<typeof prepareRun>) {
  return defineStep(
    STATE_NAMES.prepare,
    dependencies.logger,
    z.object({ runId: runIdSchema, executionId: z.string().check(z.minLength(1)) }),
    (input) => prepareRun(dependencies, input),
  );
}
