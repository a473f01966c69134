import * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import { isTransientStepFailure, STATE_NAMES, type StateName } from '../../contract/state-names.js';
import type { Logger } from '../../core/ports.js';
import { type RecordingDependencies, withReceiptRecording } from '../../core/receipts/receipt-recording.js';
import {
  type EndRunDependencies,
  finishRun,
  markRunExpired,
  markRunFailed,
} from '../../core/runs/end-run.js';
import { defineStep, runIdSchema, type StepDependencies } from './define-step.js';

/** The `Finish` step: the run completed. */
export function createFinishStep(dependencies: StepDependencies<EndRunDependencies>) {
  return defineEndStep(STATE_NAMES.finish, dependencies.logger, z.object({ runId: runIdSchema }), (input) =>
    finishRun(dependencies, input),
  );
}

/**
 * The `MarkFailed` step: any failure the state machine caught, with the state that failed (the
 * catch's Pass state names it) and whether its error is transient (a redrive may then resume it).
 */
export function createMarkFailedStep(dependencies: StepDependencies<EndRunDependencies>) {
  return defineEndStep(
    STATE_NAMES.markFailed,
    dependencies.logger,
    z.object({
      runId: runIdSchema,
      failure: z.optional(z.object({ Error: z.optional(z.string()), Cause: z.optional(z.string()) })),
      failedStep: z.optional(z.string().check(z.maxLength(80))),
    }),
    ({ runId, failure, failedStep }) =>
      markRunFailed(dependencies, {
        runId,
        ...(failure === undefined ? {} : { failure }),
        ...(failedStep === undefined
          ? {}
          : { failedStep: { step: failedStep, transient: isTransientStepFailure(failure?.Error) } }),
      }),
  );
}

/** The `MarkExpired` step: the approval wait timed out (an expiry entry on the run's receipt chain, unsigned). */
export function createMarkExpiredStep(
  dependencies: StepDependencies<EndRunDependencies> & RecordingDependencies,
) {
  const recording = withReceiptRecording(dependencies, 'append');
  return defineEndStep(
    STATE_NAMES.markExpired,
    dependencies.logger,
    z.looseObject({ runId: runIdSchema }),
    (input) => markRunExpired(recording, { runId: input.runId }),
  );
}

/** An end state's step: it ends the run with its use case and passes the run id on. */
function defineEndStep<Schema extends zc.$ZodType<{ runId: string }>>(
  stateName: StateName,
  logger: Logger,
  schema: Schema,
  end: (input: z.infer<Schema>) => Promise<unknown>,
): (event: unknown) => Promise<{ runId: string }> {
  return defineStep(stateName, logger, schema, async (input) => {
    await end(input);
    return { runId: input.runId };
  });
}
