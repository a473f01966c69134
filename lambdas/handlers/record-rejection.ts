import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsSealer } from './composition/aws-sealer.js';
import type { StepHandlers } from './step-handlers.js';
import { createRecordRejectionStep } from './steps/record-rejection-step.js';

let step: StepHandlers['RecordRejection'] | undefined;

/** Lambda entry point of the state machine's `RecordRejection` state: the sealer, no tools and no model. */
export const handler: StepHandlers['RecordRejection'] = (event) => {
  step ??= createRecordRejectionStep({ ...awsBaseDependencies(), sealer: awsSealer() });
  return step(event);
};
