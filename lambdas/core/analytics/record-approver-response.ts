import type { Logger, Metrics } from '../ports.js';
import type { ChainEntry } from '../receipts/chain-entry.js';
import { type ApproverResponseStore, readApproverResponse } from './approver-response.js';

/**
 * Approvals within this many seconds of the card appearing count as quick on the dashboard
 * (`QuickApprovals`); the admin route takes any window.
 */
export const QUICK_APPROVAL_SECONDS = 10;

export interface ApproverResponseRecording {
  responses: ApproverResponseStore;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Records the approver response a receipt entry holds, if any: its metrics per approver group
 * (`ApproverResponseTime`; `QuickApprovals`, `ApproverRejects` and `ApproverEdits` as 0 or 1,
 * whose average is a share) and the response itself for the admin route. Observation only: nothing here changes or
 * delays a decision beyond the write.
 *
 * @example
 * await recordApproverResponse(dependencies, appendedEntry);
 */
export async function recordApproverResponse(
  dependencies: ApproverResponseRecording,
  entry: ChainEntry,
): Promise<void> {
  const response = readApproverResponse(entry);
  if (!response) return;
  for (const approverGroup of response.groups) {
    const dimensions = { approverGroup };
    dependencies.metrics.observe(
      'ApproverResponseTime',
      response.responseMilliseconds,
      'Milliseconds',
      dimensions,
    );
    dependencies.metrics.count('ApproverRejects', response.outcome === 'reject' ? 1 : 0, dimensions);
    dependencies.metrics.count('ApproverEdits', response.outcome === 'edit' ? 1 : 0, dimensions);
    if (response.outcome === 'approve') {
      const quick = response.responseMilliseconds <= QUICK_APPROVAL_SECONDS * 1000;
      dependencies.metrics.count('QuickApprovals', quick ? 1 : 0, dimensions);
    }
  }
  await dependencies.responses.recordResponse(response);
}
