import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsExternalRuns, awsWebhooks } from './composition/aws-external-runs.js';
import { awsSealer } from './composition/aws-sealer.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createNotifyCallerStep } from './steps/external-run-steps.js';

/**
 * Lambda entry point of the `NotifyCaller` state: the sealer (the webhook URL is sealed with the
 * run), the reports, the signing secrets and the outbound poster; nothing else reaches out.
 */
export const handler: StepHandlers['NotifyCaller'] = composeOnFirstInvocation(() =>
  createNotifyCallerStep({
    ...awsBaseDependencies(),
    sealer: awsSealer(),
    externalRuns: awsExternalRuns(),
    ...awsWebhooks(),
  }),
);
