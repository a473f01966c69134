import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import type { StepHandlers } from './step-handlers.js';
import { createMarkExpiredStep } from './steps/end-run-steps.js';

let step: StepHandlers['MarkExpired'] | undefined;

/** Lambda entry point of the state machine's `MarkExpired` state: the run store only, no sealer and no model. */
export const handler: StepHandlers['MarkExpired'] = (event) => {
  step ??= createMarkExpiredStep(awsBaseDependencies());
  return step(event);
};
