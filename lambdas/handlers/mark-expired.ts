import { awsAnnouncingRuns } from './composition/aws-announcing-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsReceipts } from './composition/aws-receipts.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createMarkExpiredStep } from './steps/end-run-steps.js';

/** Lambda entry point of the state machine's `MarkExpired` state: the run store and the receipt chains, no sealer and no model. */
export const handler: StepHandlers['MarkExpired'] = composeOnFirstInvocation(() =>
  // The card it closes is announced (`Card Closed`): the channels update their messages.
  createMarkExpiredStep({ ...awsBaseDependencies(), runs: awsAnnouncingRuns(), receipts: awsReceipts() }),
);
