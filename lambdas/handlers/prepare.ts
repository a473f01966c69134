import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import type { StepHandlers } from './step-handlers.js';
import { createPrepareStep } from './steps/prepare-step.js';

let step: StepHandlers['Prepare'] | undefined;

/** Lambda entry point of the state machine's `Prepare` state: the run store only, no sealer and no model. */
export const handler: StepHandlers['Prepare'] = (event) => {
  step ??= createPrepareStep(awsBaseDependencies());
  return step(event);
};
