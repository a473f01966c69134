import { awsAnnouncingRuns } from './composition/aws-announcing-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsEscalationTimers } from './composition/aws-escalation-timers.js';
import { awsMcp } from './composition/aws-mcp.js';
import { awsNotifier } from './composition/aws-notifier.js';
import { awsReceipts } from './composition/aws-receipts.js';
import { awsSealer } from './composition/aws-sealer.js';
import { awsTools } from './composition/aws-tools.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createAwaitApprovalStep } from './steps/await-approval-step.js';

/** Lambda entry point of the state machine's `AwaitApproval` state: the approval scan, no model. */
export const handler: StepHandlers['AwaitApproval'] = composeOnFirstInvocation(() =>
  createAwaitApprovalStep({
    ...awsBaseDependencies(),
    // A pause may close the card it replaces: its channels hear of it (`Card Closed`).
    runs: awsAnnouncingRuns(),
    sealer: awsSealer(),
    tools: awsTools(),
    mcp: awsMcp(),
    notifier: awsNotifier(),
    escalations: awsEscalationTimers(),
    // Read only: a decision found on record is carried on once its receipt entry is there.
    receipts: awsReceipts(),
  }),
);
