import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsReceipts } from './composition/aws-receipts.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createPrepareStep } from './steps/prepare-step.js';

/** Lambda entry point of the state machine's `Prepare` state: the run store and the receipt chains, no sealer and no model. */
export const handler: StepHandlers['Prepare'] = composeOnFirstInvocation(() =>
  createPrepareStep({ ...awsBaseDependencies(), receipts: awsReceipts() }),
);
