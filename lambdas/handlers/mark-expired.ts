import { awsDependencies } from './aws-dependencies.js';
import { createStepHandlers, type StepHandlers } from './step-handlers.js';

let step: StepHandlers['MarkExpired'] | undefined;

/** Lambda entry point of the state machine's `MarkExpired` state. */
export const handler: StepHandlers['MarkExpired'] = (event) => {
  step ??= createStepHandlers(awsDependencies()).MarkExpired;
  return step(event);
};
