import type { UserProfile } from '../identity.js';
import type { TurnPolicy } from '../policy/policy-floor.js';
import type { RunDependencies } from '../runs/run-dependencies.js';
import { APPROVAL_RECORD_SCHEMA_VERSION, type DecisionChannel } from './decision-record.js';
import type { StoredCard } from './stored-card.js';

/** How far a k-of-n turn is: who has approved, out of how many needed. */
export interface ApprovalTally {
  count: number;
  required: number;
  approvedBy: string[];
}

/**
 * The approvals that count toward a turn: under four-eyes the owner never counts, even if an
 * approval of theirs predates the floor.
 *
 * @example
 * countApprovals(['editor', 'ana'], { fourEyes: true, requiredApprovals: 2 }, 'editor')
 * // { count: 1, required: 2, approvedBy: ['ana'] }
 */
export function countApprovals(
  approvedBy: readonly string[],
  policy: Pick<TurnPolicy, 'fourEyes' | 'requiredApprovals'>,
  owner: string,
): ApprovalTally {
  const counted = approvedBy.filter((userId) => !(policy.fourEyes && userId === owner));
  return { count: counted.length, required: policy.requiredApprovals, approvedBy: counted };
}

/**
 * k-of-n: claims this approver's approval (a conditional write, audited) and reads the tally.
 * Whoever sees the tally reach K goes on to claim the decision, which only one request wins,
 * so the task token is delivered once however many approvals race.
 *
 * @example
 * const tally = await tallyApproval(dependencies, approver, stored, policy, now, 'api');
 * if (tally.kind === 'counted' && tally.approvals.count >= tally.approvals.required) // claim the decision
 */
export async function tallyApproval(
  dependencies: Pick<RunDependencies, 'runs' | 'metrics' | 'logger'>,
  principal: UserProfile,
  card: StoredCard,
  policy: TurnPolicy,
  now: Date,
  channel: DecisionChannel,
): Promise<{ kind: 'card-moved' } | { kind: 'counted'; approvals: ApprovalTally }> {
  const outcome = await dependencies.runs.recordApproval({
    schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
    runId: card.runId,
    turn: card.turn,
    digest: card.digest,
    approvedBy: principal.userId,
    approvedAt: now.toISOString(),
    channel,
  });
  if (outcome.kind === 'card-moved') return outcome;
  const approvals = countApprovals(outcome.approvedBy, policy, card.owner);
  dependencies.metrics.count('Approvals');
  dependencies.logger.info('approval recorded', {
    runId: card.runId,
    turn: card.turn,
    approvals: approvals.count,
    requiredApprovals: approvals.required,
  });
  return { kind: 'counted', approvals };
}
