import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsNotifier } from './composition/aws-notifier.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createRecordExternalDecisionStep } from './steps/external-run-steps.js';

/** Lambda entry point of the `RecordExternalDecision` state: the run store and EventBridge, no sealer. */
export const handler: StepHandlers['RecordExternalDecision'] = composeOnFirstInvocation(() =>
  createRecordExternalDecisionStep({ ...awsBaseDependencies(), notifier: awsNotifier() }),
);
