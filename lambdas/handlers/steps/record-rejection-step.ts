import { STATE_NAMES } from '../../contract/state-names.js';
import { type RecordRejectionDependencies, recordRejection } from '../../core/runs/record-rejection.js';
import { defineStep, type StepDependencies, stepInputSchema } from './define-step.js';

/** The `RecordRejection` step: tells the model its calls were denied. */
export function createRecordRejectionStep(dependencies: StepDependencies<RecordRejectionDependencies>) {
  return defineStep(STATE_NAMES.recordRejection, dependencies.logger, stepInputSchema, (input) =>
    recordRejection(dependencies, input),
  );
}
