import * as z from 'zod/mini';
import { STATE_NAMES } from '../../contract/state-names.js';
import { type NotifyCallerDependencies, notifyCaller } from '../../core/external-runs/notify-caller.js';
import {
  type RecordExternalDecisionDependencies,
  recordExternalDecision,
} from '../../core/external-runs/record-external-decision.js';
import { defineStep, runIdSchema, type StepDependencies, stepInputSchema } from './define-step.js';

/** The `RecordExternalDecision` step: an external run's answer recorded and announced. */
export function createRecordExternalDecisionStep(
  dependencies: StepDependencies<RecordExternalDecisionDependencies>,
) {
  return defineStep(
    STATE_NAMES.recordExternalDecision,
    dependencies.logger,
    stepInputSchema,
    async (input) => {
      const outcome = await recordExternalDecision(dependencies, input);
      // An edit goes back to its card through ExecuteTools, which reads the run and turn.
      return { runId: input.runId, turn: input.turn, route: outcome.kind };
    },
  );
}

/** The `NotifyCaller` step: the answer posted to the caller's webhook (retried by the workflow). */
export function createNotifyCallerStep(dependencies: StepDependencies<NotifyCallerDependencies>) {
  return defineStep(
    STATE_NAMES.notifyCaller,
    dependencies.logger,
    z.object({ runId: runIdSchema }),
    async (input) => ({ runId: input.runId, webhook: (await notifyCaller(dependencies, input)).kind }),
  );
}
