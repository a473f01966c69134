import type { RunDependencies } from '../core/runs/run-dependencies.js';
import { createAwaitApprovalStep } from './steps/await-approval-step.js';
import { createFinishStep, createMarkExpiredStep, createMarkFailedStep } from './steps/end-run-steps.js';
import { createExecuteToolsStep } from './steps/execute-tools-step.js';
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
    Prepare: createPrepareStep(dependencies),
    ModelTurn: createModelTurnStep(dependencies),
    AwaitApproval: createAwaitApprovalStep(dependencies),
    ExecuteTools: createExecuteToolsStep(dependencies),
    RecordRejection: createRecordRejectionStep(dependencies),
    Finish: createFinishStep(dependencies),
    MarkFailed: createMarkFailedStep(dependencies),
    MarkExpired: createMarkExpiredStep(dependencies),
  };
}

export type StepHandlers = ReturnType<typeof createStepHandlers>;
