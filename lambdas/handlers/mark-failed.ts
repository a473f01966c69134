import { awsDependencies } from './aws-dependencies.js';
import { createStepHandlers, type StepHandlers } from './step-handlers.js';

let step: StepHandlers['MarkFailed'] | undefined;

/** Lambda entry point of the state machine's `MarkFailed` state. */
export const handler: StepHandlers['MarkFailed'] = (event) => {
  step ??= createStepHandlers(awsDependencies()).MarkFailed;
  return step(event);
};
