import { awsDependencies } from './aws-dependencies.js';
import { createStepHandlers, type StepHandlers } from './step-handlers.js';

let step: StepHandlers['Finish'] | undefined;

/** Lambda entry point of the state machine's `Finish` state. */
export const handler: StepHandlers['Finish'] = (event) => {
  step ??= createStepHandlers(awsDependencies()).Finish;
  return step(event);
};
