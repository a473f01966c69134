import type { UserProfile } from '../identity.js';
import type { TurnPolicy } from '../policy/policy-floor.js';
import type { RunDependencies } from '../runs/run-dependencies.js';
import { TEXTS } from '../texts.js';
import { type ApproverCheckDependencies, findLapsedApprovers } from './confirm-approvals.js';
import { APPROVAL_RECORD_SCHEMA_VERSION, type DecisionChannel } from './decision-record.js';
import type { ResolvedCall } from './resolve-calls.js';
import type { StoredCard } from './stored-card.js';

/** How far a k-of-n turn is: who has approved, out of how many needed. */
export interface ApprovalTally {
  count: number;
  required: number;
  approvedBy: string[];
  /** Approvers whose approval stopped counting: they no longer held the authority it needed. */
  lapsedApprovers?: string[];
}

/**
 * The approvals that count toward a turn: under four-eyes the owner never counts, even if an
 * approval of theirs predates the floor. An approver who lapsed and approved again counts again.
 *
 * @example
 * countApprovals(['editor', 'ana'], { fourEyes: true, requiredApprovals: 2 }, 'editor')
 * // { count: 1, required: 2, approvedBy: ['ana'] }
 */
export function countApprovals(
  approvedBy: readonly string[],
  policy: Pick<TurnPolicy, 'fourEyes' | 'requiredApprovals'>,
  owner: string,
  lapsedApprovers: readonly string[] = [],
): ApprovalTally {
  const counted = approvedBy.filter((userId) => !(policy.fourEyes && userId === owner));
  const lapsed = lapsedApprovers.filter((userId) => !approvedBy.includes(userId));
  return {
    count: counted.length,
    required: policy.requiredApprovals,
    approvedBy: counted,
    ...(lapsed.length > 0 ? { lapsedApprovers: lapsed } : {}),
  };
}

export type TallyOutcome =
  | { kind: 'card-moved' }
  /** The turn needs more approvals that qualify: answered 202 with the tally and `message`. */
  | { kind: 'waiting'; approvals: ApprovalTally; message: string }
  /** K approvals qualify now: `approvedBy` go on record with the decision. */
  | { kind: 'complete'; approvedBy: string[] };

type TallyDependencies = Pick<RunDependencies, 'runs' | 'metrics' | 'logger'> & ApproverCheckDependencies;

/**
 * k-of-n: claims this approver's approval (a conditional write, audited) and reads the tally.
 * When the tally reaches K, every approval counted is re-checked against its approver's CURRENT
 * record ({@link findLapsedApprovers}); those that no longer qualify lapse (the card's tally says
 * whose) and the turn waits. Whoever sees K approvals qualify goes on to claim the decision, which
 * only one request wins, so the task token is delivered once however many approvals race.
 *
 * @example
 * const tally = await tallyApproval(dependencies, { principal, card, policy, now, approvalCalls, channel: 'api' });
 * if (tally.kind === 'complete') // claim the decision with tally.approvedBy
 */
export async function tallyApproval(
  dependencies: TallyDependencies,
  input: {
    principal: UserProfile;
    card: StoredCard;
    policy: TurnPolicy;
    now: Date;
    /** The unsealed card's calls, resolved once (the `record` gate's re-checks read them). */
    approvalCalls: () => Promise<readonly ResolvedCall[]>;
    /** Where the approver approved, recorded with the approval. */
    channel: DecisionChannel;
  },
): Promise<TallyOutcome> {
  const { principal, card, policy } = input;
  const outcome = await dependencies.runs.recordApproval({
    schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
    runId: card.runId,
    turn: card.turn,
    digest: card.digest,
    approvedBy: principal.userId,
    approvedAt: input.now.toISOString(),
    channel: input.channel,
  });
  if (outcome.kind === 'card-moved') return outcome;
  const approvals = countApprovals(outcome.approvedBy, policy, card.owner, card.lapsedApprovers);
  dependencies.metrics.count('Approvals');
  dependencies.logger.info('approval recorded', {
    runId: card.runId,
    turn: card.turn,
    approvals: approvals.count,
    requiredApprovals: approvals.required,
  });
  if (approvals.count < approvals.required) return waiting(approvals);
  const lapsed = await findLapsedApprovers(dependencies, {
    current: principal,
    approvedBy: approvals.approvedBy,
    card,
    policy,
    approvalCalls: input.approvalCalls,
  });
  if (lapsed.length === 0) return { kind: 'complete', approvedBy: approvals.approvedBy };

  const lapse = await dependencies.runs.lapseApprovals({
    runId: card.runId,
    turn: card.turn,
    digest: card.digest,
    approvers: lapsed,
  });
  if (lapse.kind === 'card-moved') return lapse;
  dependencies.logger.info('approvals lapsed', { runId: card.runId, turn: card.turn, lapsed: lapsed.length });
  // Only approvals re-checked here count: one that arrived meanwhile completes on its own request.
  const confirmed = countApprovals(
    approvals.approvedBy.filter((userId) => !lapsed.includes(userId)),
    policy,
    card.owner,
    lapse.lapsedApprovers,
  );
  if (confirmed.count >= confirmed.required) return { kind: 'complete', approvedBy: confirmed.approvedBy };
  return {
    kind: 'waiting',
    approvals: confirmed,
    message: TEXTS.approvalsLapsed(confirmed.count, confirmed.required, lapsed),
  };
}

function waiting(approvals: ApprovalTally): TallyOutcome {
  return { kind: 'waiting', approvals, message: TEXTS.approvalRecorded(approvals.count, approvals.required) };
}
