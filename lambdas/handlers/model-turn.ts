import { awsDependencies } from './aws-dependencies.js';
import { createStepHandlers, type StepHandlers } from './step-handlers.js';

let step: StepHandlers['ModelTurn'] | undefined;

/** Lambda entry point of the state machine's `ModelTurn` state. */
export const handler: StepHandlers['ModelTurn'] = (event) => {
  step ??= createStepHandlers(awsDependencies()).ModelTurn;
  return step(event);
};
