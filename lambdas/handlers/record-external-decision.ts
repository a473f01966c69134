import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsNotifier } from './composition/aws-notifier.js';
import { awsSealer } from './composition/aws-sealer.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createRecordExternalDecisionStep } from './steps/external-run-steps.js';

/**
 * Lambda entry point of the `RecordExternalDecision` state: the run store, EventBridge, and the
 * sealer that opens an answered run's state (which calls an approver edited).
 */
export const handler: StepHandlers['RecordExternalDecision'] = composeOnFirstInvocation(() =>
  createRecordExternalDecisionStep({
    ...awsBaseDependencies(),
    sealer: awsSealer(),
    notifier: awsNotifier(),
  }),
);
