import { awsDependencies } from './aws-dependencies.js';
import { createStepHandlers, type StepHandlers } from './step-handlers.js';

let step: StepHandlers['RecordRejection'] | undefined;

/** Lambda entry point of the state machine's `RecordRejection` state. */
export const handler: StepHandlers['RecordRejection'] = (event) => {
  step ??= createStepHandlers(awsDependencies()).RecordRejection;
  return step(event);
};
