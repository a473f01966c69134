import * as z from 'zod/mini';
import { STATE_NAMES } from '../../contract/state-names.js';
import { finishRun, markRunExpired, markRunFailed } from '../../core/runs/end-run.js';
import { defineStep, runIdSchema, type StepDependencies } from './define-step.js';

/** The `Finish` step: the run completed. */
export function createFinishStep(dependencies: StepDependencies<typeof finishRun>) {
  return defineStep(
    STATE_NAMES.finish,
    dependencies.logger,
    z.object({ runId: runIdSchema }),
    async (input) => {
      await finishRun(dependencies, input);
      return { runId: input.runId };
    },
  );
}

/** The `MarkFailed` step: any failure the state machine caught. */
export function createMarkFailedStep(dependencies: StepDependencies<typeof markRunFailed>) {
  return defineStep(
    STATE_NAMES.markFailed,
    dependencies.logger,
    z.object({
      runId: runIdSchema,
      failure: z.optional(z.object({ Error: z.optional(z.string()), Cause: z.optional(z.string()) })),
    }),
    async (input) => {
      await markRunFailed(dependencies, input);
      return { runId: input.runId };
    },
  );
}

/** The `MarkExpired` step: the approval wait timed out. */
export function createMarkExpiredStep(dependencies: StepDependencies<typeof markRunExpired>) {
  return defineStep(
    STATE_NAMES.markExpired,
    dependencies.logger,
    z.looseObject({ runId: runIdSchema }),
    async (input) => {
      await markRunExpired(dependencies, { runId: input.runId });
      return { runId: input.runId };
    },
  );
}
