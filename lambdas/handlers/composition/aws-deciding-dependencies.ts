import type { RunDependencies } from '../../core/run-dependencies.js';
import { awsAnnouncingRuns } from './aws-announcing-runs.js';
import { type AwsBaseDependencies, awsBaseDependencies } from './aws-base-dependencies.js';
import { awsExecutions } from './aws-executions.js';
import { awsSigningReceipts } from './aws-receipts.js';
import { awsSealer } from './aws-sealer.js';
import { awsTools } from './aws-tools.js';

/** What a function that decides cards uses beside the base part. */
type AwsDecidingDependencies = AwsBaseDependencies &
  Pick<RunDependencies, 'sealer' | 'executions' | 'tools' | 'receipts'>;

/**
 * What deciding a card needs, the same for each function that decides (the decision route and
 * Slack's buttons): the sealer, Step Functions, the tools (which calls would run; the `record`
 * decision gate asks each write tool's record check) and the receipt signer (KMS, the receipt key),
 * no model.
 *
 * @example
 * export const handler = composeOnFirstInvocation(() => createDecisionApi(awsDecidingDependencies()));
 */
export function awsDecidingDependencies(): AwsDecidingDependencies {
  return {
    ...awsBaseDependencies(),
    // A card it closes is announced (`Card Closed`): the channels update their messages.
    runs: awsAnnouncingRuns(),
    sealer: awsSealer(),
    executions: awsExecutions(),
    tools: awsTools(),
    receipts: awsSigningReceipts(),
  };
}
