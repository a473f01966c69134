import { awsDependencies } from './aws-dependencies.js';
import { createStepHandlers, type StepHandlers } from './step-handlers.js';

let step: StepHandlers['Prepare'] | undefined;

/** Lambda entry point of the state machine's `Prepare` state. */
export const handler: StepHandlers['Prepare'] = (event) => {
  step ??= createStepHandlers(awsDependencies()).Prepare;
  return step(event);
};
