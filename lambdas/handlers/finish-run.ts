import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import type { StepHandlers } from './step-handlers.js';
import { createFinishStep } from './steps/end-run-steps.js';

let step: StepHandlers['Finish'] | undefined;

/** Lambda entry point of the state machine's `Finish` state: the run store only, no sealer and no model. */
export const handler: StepHandlers['Finish'] = (event) => {
  step ??= createFinishStep(awsBaseDependencies());
  return step(event);
};
