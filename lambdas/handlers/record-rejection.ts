import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsSealer } from './composition/aws-sealer.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createRecordRejectionStep } from './steps/record-rejection-step.js';

/** Lambda entry point of the state machine's `RecordRejection` state: the sealer, no tools and no model. */
export const handler: StepHandlers['RecordRejection'] = composeOnFirstInvocation(() =>
  createRecordRejectionStep({ ...awsBaseDependencies(), sealer: awsSealer() }),
);
