import * as z from 'zod/mini';
import { finishRun, markRunExpired, markRunFailed } from '../../core/runs/end-run.js';
import { defineStep, runIdSchema, type StepDependencies } from './define-step.js';

/** The `Finish` step: the run completed. */
export function createFinishStep(dependencies: StepDependencies<typeof finishRun>) {
  return defineStep('Finish', dependencies.logger, z.object({ runId: runIdSchema }), async (input) => {
    await finishRun(dependencies, input);
    return { runId: input.runId };
  });
}

/** The `MarkFailed` step: any failure the state machine caught. */
export function createMarkFailedStep(dependencies: StepDependencies<typeof markRunFailed>) {
  return defineStep(
    'MarkFailed',
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
    'MarkExpired',
    dependencies.logger,
    z.looseObject({ runId: runIdSchema }),
    async (input) => {
      await markRunExpired(dependencies, { runId: input.runId });
      return { runId: input.runId };
    },
  );
}
