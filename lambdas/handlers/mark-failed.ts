import { awsAnnouncingRuns } from './composition/aws-announcing-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createMarkFailedStep } from './steps/end-run-steps.js';

/** Lambda entry point of the state machine's `MarkFailed` state: the run store only, no sealer and no model. */
export const handler: StepHandlers['MarkFailed'] = composeOnFirstInvocation(() =>
  // The card it closes is announced (`Card Closed`): the channels update their messages.
  createMarkFailedStep({ ...awsBaseDependencies(), runs: awsAnnouncingRuns() }),
);
