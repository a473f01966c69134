import { awsAnnouncingRuns } from './composition/aws-announcing-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsMcp } from './composition/aws-mcp.js';
import { awsSealer } from './composition/aws-sealer.js';
import { awsTools } from './composition/aws-tools.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createExecuteToolsStep } from './steps/execute-tools-step.js';

/** Lambda entry point of the state machine's `ExecuteTools` state: the sealer and the tools, no model. */
export const handler: StepHandlers['ExecuteTools'] = composeOnFirstInvocation(() =>
  createExecuteToolsStep({
    ...awsBaseDependencies(),
    // A card it closes is announced (`Card Closed`): the channels update their messages.
    runs: awsAnnouncingRuns(),
    sealer: awsSealer(),
    tools: awsTools(),
    mcp: awsMcp(),
  }),
);
