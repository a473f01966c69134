import { STATE_NAMES } from '../contract/state-names.js';
import type { RunDependencies } from '../core/run-dependencies.js';
import { createAwaitApprovalStep } from './steps/await-approval-step.js';
import { createFinishStep, createMarkExpiredStep, createMarkFailedStep } from './steps/end-run-steps.js';
import { createExecuteToolsStep } from './steps/execute-tools-step.js';
import { createNotifyCallerStep, createRecordExternalDecisionStep } from './steps/external-run-steps.js';
import { createModelTurnStep } from './steps/model-turn-step.js';
import { createPrepareStep } from './steps/prepare-step.js';
import { createRecordRejectionStep } from './steps/record-rejection-step.js';

export { stepError } from './steps/define-step.js';

/**
 * The state machine's Lambda steps, keyed by the state names of the ASL (the local runner
 * keys its handlers the same way). Each step lives in its own module under `steps/` and asks
 * only for what its use case reads, so a deployed Lambda imports its own step alone and
 * bundles only the adapters it uses (Prepare and the end states: no sealer, no model).
 *
 * @example
 * const runner = new LocalStateMachineRunner({ definition, stepHandlers: createStepHandlers(dependencies), logger });
 */
export function createStepHandlers(dependencies: RunDependencies) {
  return {
    [STATE_NAMES.prepare]: createPrepareStep(dependencies),
    [STATE_NAMES.modelTurn]: createModelTurnStep(dependencies),
    [STATE_NAMES.awaitApproval]: createAwaitApprovalStep(dependencies),
    [STATE_NAMES.executeTools]: createExecuteToolsStep(dependencies),
    [STATE_NAMES.recordRejection]: createRecordRejectionStep(dependencies),
    [STATE_NAMES.finish]: createFinishStep(dependencies),
    [STATE_NAMES.markFailed]: createMarkFailedStep(dependencies),
    [STATE_NAMES.markExpired]: createMarkExpiredStep(dependencies),
    [STATE_NAMES.recordExternalDecision]: createRecordExternalDecisionStep(dependencies),
    [STATE_NAMES.notifyCaller]: createNotifyCallerStep(dependencies),
  };
}

export type StepHandlers = ReturnType<typeof createStepHandlers>;
