import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createPrepareStep } from './steps/prepare-step.js';

/** Lambda entry point of the state machine's `Prepare` state: the run store only, no sealer and no model. */
export const handler: StepHandlers['Prepare'] = composeOnFirstInvocation(() =>
  createPrepareStep(awsBaseDependencies()),
);
