import { createSlackNotifyHandler } from './channels/channel-event-handlers.js';
import { awsAnnouncingRuns } from './composition/aws-announcing-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsExecutionsOnDemand } from './composition/aws-executions-on-demand.js';
import { awsSealer } from './composition/aws-sealer.js';
import { awsSlackChannel } from './composition/aws-slack.js';
import { awsTools } from './composition/aws-tools.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';

/**
 * Lambda entry point of the Slack channel (a rule target of `Run Awaiting Approval` and `Card
 * Closed`): the card reader (the sealer, the tools' read gates) and Slack; Step Functions only to
 * stop the run of a card that cannot be opened.
 */
export const handler = composeOnFirstInvocation(() =>
  createSlackNotifyHandler({
    ...awsBaseDependencies(),
    // A card it closes is announced (`Card Closed`): the channels update their messages.
    runs: awsAnnouncingRuns(),
    sealer: awsSealer(),
    tools: awsTools(),
    executions: awsExecutionsOnDemand(),
    slack: awsSlackChannel(),
  }),
);
