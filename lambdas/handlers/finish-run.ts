import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createFinishStep } from './steps/end-run-steps.js';

/** Lambda entry point of the state machine's `Finish` state: the run store only, no sealer and no model. */
export const handler: StepHandlers['Finish'] = composeOnFirstInvocation(() =>
  createFinishStep(awsBaseDependencies()),
);
