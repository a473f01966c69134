import { awsDependencies } from './aws-dependencies.js';
import { createStepHandlers, type StepHandlers } from './step-handlers.js';

let step: StepHandlers['AwaitApproval'] | undefined;

/** Lambda entry point of the state machine's `AwaitApproval` state. */
export const handler: StepHandlers['AwaitApproval'] = (event) => {
  step ??= createStepHandlers(awsDependencies()).AwaitApproval;
  return step(event);
};
