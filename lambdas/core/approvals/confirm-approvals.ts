import { isDelegationActive } from '../delegation/delegation.js';
import { hasGrant, type UserProfile } from '../identity.js';
import type { PageStore } from '../pages.js';
import type { TurnPolicy } from '../policy/policy-floor.js';
import type { Logger, UserDirectory } from '../ports.js';
import { isCardRoutedTo, reachesThroughGroups } from './card-routing.js';
import { evaluateApproveGate } from './decision-gate.js';
import type { ResolvedCall } from './resolve-calls.js';
import type { DelegatedApproval, StoredCard } from './stored-card.js';

/** What re-checking the approvers of a turn reads: their records now, and the records their calls touch. */
export interface ApproverCheckDependencies {
  users: Pick<UserDirectory, 'getUser'>;
  /** Fresh reads: authority is judged on the record as it is now. */
  pages: PageStore;
  logger: Logger;
}

/**
 * k-of-n, when a decision comes to complete: the approvers among `approvedBy` whose approval no
 * longer qualifies, judged on their CURRENT user record exactly as a fresh approval of theirs
 * would be: the `agent_approve` grant, the card's routing, and the decision gate (tool-level
 * authority, four-eyes, and with the `record` gate each guarded call's record check). A user
 * whose record is gone (deleted, or never had one: known only by their identity provider's
 * groups, which only their own request carries) cannot be re-checked, and fails closed.
 * `current` (the approver of this request, whose record and gate were just checked) is not read again.
 *
 * @example
 * const lapsed = await findLapsedApprovers(dependencies, { current: principal, approvedBy, card, policy, approvalCalls });
 */
export async function findLapsedApprovers(
  dependencies: ApproverCheckDependencies,
  input: {
    current: UserProfile;
    approvedBy: readonly string[];
    /** Approvals given acting for someone away: that delegation, and their authority, are re-checked too. */
    delegatedApprovals?: readonly DelegatedApproval[];
    card: StoredCard;
    policy: TurnPolicy;
    now: Date;
    approvalCalls: () => Promise<readonly ResolvedCall[]>;
    /** Per-call decisions: the calls the approvals approve, the only ones gated. @default every call */
    approvedIndexes?: ReadonlySet<number>;
  },
): Promise<string[]> {
  const others = input.approvedBy.filter((userId) => userId !== input.current.userId);
  const actingFor = new Map(
    (input.delegatedApprovals ?? []).map((entry) => [entry.approver, entry.actingFor]),
  );
  const answers = await Promise.all(
    others.map(async (userId) => ({
      userId,
      qualifies: await qualifiesToApprove(dependencies, userId, actingFor.get(userId), input),
    })),
  );
  return answers.filter((answer) => !answer.qualifies).map((answer) => answer.userId);
}

/**
 * An approval qualifies when its approver could give it now: in their own right, the grant, the
 * routing and the gate; acting for someone, the grant and the gate of both, that delegation still
 * in force, and the card routed to the one they act for.
 */
async function qualifiesToApprove(
  dependencies: ApproverCheckDependencies,
  userId: string,
  delegatorId: string | undefined,
  input: {
    card: StoredCard;
    policy: TurnPolicy;
    now: Date;
    approvalCalls: () => Promise<readonly ResolvedCall[]>;
  },
): Promise<boolean> {
  const [approver, delegator] = await Promise.all([
    dependencies.users.getUser(userId),
    delegatorId === undefined ? undefined : dependencies.users.getUser(delegatorId),
  ]);
  if (!approver || !hasGrant(approver, 'agent_approve')) return false;
  if (delegatorId === undefined) {
    return isCardRoutedTo(input.card, approver) && passesGate(dependencies, approver, input);
  }
  if (!delegator || !isDelegationActive(delegator, userId, input.now)) return false;
  if (!reachesThroughGroups(input.card, delegator)) return false;
  const [own, delegated] = await Promise.all([
    passesGate(dependencies, approver, input),
    passesGate(dependencies, delegator, input),
  ]);
  return own && delegated;
}

async function passesGate(
  dependencies: ApproverCheckDependencies,
  approver: UserProfile,
  input: {
    card: StoredCard;
    policy: TurnPolicy;
    approvalCalls: () => Promise<readonly ResolvedCall[]>;
    approvedIndexes?: ReadonlySet<number>;
  },
): Promise<boolean> {
  const gate = await evaluateApproveGate({
    principal: approver,
    card: input.card,
    policy: input.policy,
    approvalCalls: input.approvalCalls,
    pages: dependencies.pages,
    logger: dependencies.logger,
    ...(input.approvedIndexes ? { approvedIndexes: input.approvedIndexes } : {}),
  });
  return gate.kind === 'allowed';
}
