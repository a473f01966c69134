import { awsDependencies } from './aws-dependencies.js';
import { createStepHandlers, type StepHandlers } from './step-handlers.js';

let step: StepHandlers['ExecuteTools'] | undefined;

/** Lambda entry point of the state machine's `ExecuteTools` state. */
export const handler: StepHandlers['ExecuteTools'] = (event) => {
  step ??= createStepHandlers(awsDependencies()).ExecuteTools;
  return step(event);
};
