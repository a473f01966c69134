import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import type { StepHandlers } from './step-handlers.js';
import { createMarkFailedStep } from './steps/end-run-steps.js';

let step: StepHandlers['MarkFailed'] | undefined;

/** Lambda entry point of the state machine's `MarkFailed` state: the run store only, no sealer and no model. */
export const handler: StepHandlers['MarkFailed'] = (event) => {
  step ??= createMarkFailedStep(awsBaseDependencies());
  return step(event);
};
