import type { UserProfile } from '../identity.js';
import type { TurnPolicy } from '../policy/policy-floor.js';
import type { RunDependencies } from '../runs/run-dependencies.js';
import { TEXTS } from '../texts.js';
import { type ApproverCheckDependencies, findLapsedApprovers } from './confirm-approvals.js';
import { APPROVAL_RECORD_SCHEMA_VERSION } from './decision-record.js';
import type { ResolvedCall } from './resolve-calls.js';
import type { DelegatedApproval, StoredCard } from './stored-card.js';

/** How far a k-of-n turn is: who has approved, out of how many needed. */
export interface ApprovalTally {
  count: number;
  required: number;
  approvedBy: string[];
  /** Of `approvedBy`, those who approved as someone's delegate, and for whom. */
  delegatedApprovals?: DelegatedApproval[];
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
  delegatedApprovals: readonly DelegatedApproval[] = [],
): ApprovalTally {
  // Under four-eyes, neither the owner nor a delegate acting for the owner counts.
  const actingFor = new Map(delegatedApprovals.map((entry) => [entry.approver, entry.actingFor]));
  const counted = approvedBy.filter(
    (userId) => !(policy.fourEyes && (userId === owner || actingFor.get(userId) === owner)),
  );
  const delegated = delegatedApprovals.filter((entry) => counted.includes(entry.approver));
  const lapsed = lapsedApprovers.filter((userId) => !approvedBy.includes(userId));
  return {
    count: counted.length,
    required: policy.requiredApprovals,
    approvedBy: counted,
    ...(delegated.length > 0 ? { delegatedApprovals: delegated } : {}),
    ...(lapsed.length > 0 ? { lapsedApprovers: lapsed } : {}),
  };
}

export type TallyOutcome =
  | { kind: 'card-moved' }
  /** The turn needs more approvals that qualify: answered 202 with the tally and `message`. */
  | { kind: 'waiting'; approvals: ApprovalTally; message: string }
  /** K approvals qualify now: `approvedBy` (and whom delegates among them acted for) go on record with the decision. */
  | { kind: 'complete'; approvedBy: string[]; delegatedApprovals: DelegatedApproval[] };

type TallyDependencies = Pick<RunDependencies, 'runs' | 'metrics' | 'logger'> & ApproverCheckDependencies;

/**
 * k-of-n: claims this approver's approval (a conditional write, audited) and reads the tally.
 * When the tally reaches K, every approval counted is re-checked against its approver's CURRENT
 * record ({@link findLapsedApprovers}); those that no longer qualify lapse (the card's tally says
 * whose) and the turn waits. Whoever sees K approvals qualify goes on to claim the decision, which
 * only one request wins, so the task token is delivered once however many approvals race.
 *
 * @example
 * const tally = await tallyApproval(dependencies, { principal, card, policy, now, approvalCalls });
 * if (tally.kind === 'complete') // claim the decision with tally.approvedBy
 */
export async function tallyApproval(
  dependencies: TallyDependencies,
  input: {
    principal: UserProfile;
    /** The approver who is away, when `principal` approves as their delegate. */
    actingFor?: string;
    card: StoredCard;
    policy: TurnPolicy;
    now: Date;
    /** The unsealed card's calls, resolved once (the `record` gate's re-checks read them). */
    approvalCalls: () => Promise<readonly ResolvedCall[]>;
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
    ...(input.actingFor === undefined ? {} : { actingFor: input.actingFor }),
  });
  if (outcome.kind === 'card-moved') return outcome;
  const approvals = countApprovals(
    outcome.approvedBy,
    policy,
    card.owner,
    card.lapsedApprovers,
    outcome.delegatedApprovals,
  );
  dependencies.metrics.count('Approvals');
  dependencies.logger.info('approval recorded', {
    runId: card.runId,
    turn: card.turn,
    approvals: approvals.count,
    requiredApprovals: approvals.required,
  });
  if (approvals.count < approvals.required) return waiting(approvals);
  const delegatedApprovals = approvals.delegatedApprovals ?? [];
  const lapsed = await findLapsedApprovers(dependencies, {
    current: principal,
    approvedBy: approvals.approvedBy,
    delegatedApprovals,
    card,
    policy,
    now: input.now,
    approvalCalls: input.approvalCalls,
  });
  if (lapsed.length === 0) return { kind: 'complete', approvedBy: approvals.approvedBy, delegatedApprovals };

  const lapse = await dependencies.runs.lapseApprovals({
    runId: card.runId,
    turn: card.turn,
    digest: card.digest,
    approvers: lapsed,
    delegatedApprovals,
  });
  if (lapse.kind === 'card-moved') return lapse;
  dependencies.logger.info('approvals lapsed', { runId: card.runId, turn: card.turn, lapsed: lapsed.length });
  // Only approvals re-checked here count: one that arrived meanwhile completes on its own request.
  const confirmed = countApprovals(
    approvals.approvedBy.filter((userId) => !lapsed.includes(userId)),
    policy,
    card.owner,
    lapse.lapsedApprovers,
    delegatedApprovals,
  );
  if (confirmed.count >= confirmed.required) {
    return {
      kind: 'complete',
      approvedBy: confirmed.approvedBy,
      delegatedApprovals: confirmed.delegatedApprovals ?? [],
    };
  }
  return {
    kind: 'waiting',
    approvals: confirmed,
    message: TEXTS.approvalsLapsed(confirmed.count, confirmed.required, lapsed),
  };
}

function waiting(approvals: ApprovalTally): TallyOutcome {
  return { kind: 'waiting', approvals, message: TEXTS.approvalRecorded(approvals.count, approvals.required) };
}
