import type { UserProfile } from '../identity.js';
import type { PageStore } from '../pages.js';
import type { PolicyFloor, TurnPolicy } from '../policy/policy-floor.js';
import type { Logger } from '../ports.js';
import { readGatePagesFor } from '../previews/read-gate-pages.js';
import { TEXTS } from '../texts.js';
import { effectiveTurnPolicy, evaluateApproveGate } from './decision-gate.js';
import type { ResolvedCall } from './resolve-calls.js';
import type { StoredCard } from './stored-card.js';
import { type ApprovalTally, countApprovals } from './tally-approval.js';

/** What a card says about its policy to one viewer, on every surface (JSON and page). */
export interface CardPolicyView {
  /** k-of-n progress; present when the turn needs more than one approver. */
  approvals?: ApprovalTally & { summary: string };
  /** Why this viewer may not approve (they may still reject); absent when they may. */
  approveRefusal?: string;
}

/**
 * The policy part of a card for a viewer: the k-of-n tally ("1 of 2 approvals — approved by
 * …") and, when the decision gate would refuse their approval, the reason, so the page can
 * disable Approve and keep Reject. The record checks read through the read gate's batched,
 * cached page reads; the decision itself re-checks on fresh reads.
 */
export async function buildCardPolicyView(input: {
  stored: StoredCard;
  calls: readonly ResolvedCall[];
  viewer: UserProfile;
  /** The approver who is away whom the card reaches the viewer through: their gate applies too. */
  delegator?: UserProfile | undefined;
  pages: PageStore;
  logger: Logger;
  floor: PolicyFloor | undefined;
}): Promise<CardPolicyView> {
  const policy = effectiveTurnPolicy(input.stored, input.floor);
  const gateOf = (principal: UserProfile) =>
    evaluateApproveGate({
      principal,
      card: input.stored,
      policy,
      approvalCalls: async () => input.calls,
      pages: readGatePagesFor(input.pages, input.viewer),
      logger: input.logger,
    });
  const [own, delegated] = await Promise.all([
    gateOf(input.viewer),
    input.delegator ? gateOf(input.delegator) : undefined,
  ]);
  const approvals = buildTallyView(input.stored, policy);
  const view: CardPolicyView = approvals ? { approvals } : {};
  if (own.kind === 'refused') view.approveRefusal = own.message;
  else if (delegated?.kind === 'refused' && input.delegator)
    view.approveRefusal = TEXTS.gateActingFor(input.delegator.userId, delegated.message);
  return view;
}

function buildTallyView(stored: StoredCard, policy: TurnPolicy): CardPolicyView['approvals'] {
  if (policy.requiredApprovals <= 1) return undefined;
  // The card shows the approvals of every call; those of some calls only are named apart.
  const tally = countApprovals(stored, policy, stored.owner);
  const actingFor = new Map(
    (tally.delegatedApprovals ?? []).map((entry) => [entry.approver, entry.actingFor]),
  );
  const approvers = tally.approvedBy.map((userId) => {
    const delegator = actingFor.get(userId);
    return delegator === undefined ? userId : `${userId} (${TEXTS.actingFor(delegator)})`;
  });
  return {
    ...tally,
    summary: TEXTS.approvalProgress(tally.count, tally.required, approvers, tally.lapsedApprovers),
  };
}
