import type { UnsealedCard } from '../approvals/card-reader.js';
import { evaluateApproveGate } from '../approvals/decision-gate.js';
import type { StoredCard } from '../approvals/stored-card.js';
import { isDelegationActive } from '../delegation/delegation.js';
import { CountersignError } from '../errors.js';
import type { UserProfile } from '../identity.js';
import type { TurnPolicy } from '../policy/policy-floor.js';
import type { DecisionDependencies } from '../run-dependencies.js';
import { TEXTS } from '../texts.js';

/** Who decides: the approver, and the approver who is away when they act as their delegate. */
export interface Decider {
  principal: UserProfile;
  delegator: UserProfile | undefined;
}

/**
 * The decision gate of an approval, for the approver and, acting for someone, for them too: a
 * delegate decides with authority both hold (tool access, four-eyes and the record checks), so
 * neither an owner nor the delegate of an owner releases their own run under four-eyes.
 */
export async function assertDecisionGate(
  dependencies: DecisionDependencies,
  { principal, delegator }: Decider,
  card: StoredCard,
  policy: TurnPolicy,
  unsealOnce: () => Promise<UnsealedCard>,
  approvedIndexes?: ReadonlySet<number>,
): Promise<void> {
  for (const decider of delegator ? [principal, delegator] : [principal]) {
    const outcome = await evaluateApproveGate({
      principal: decider,
      card,
      policy,
      approvalCalls: async () => (await unsealOnce()).calls,
      // Fresh reads: what may be released is judged on the record as it is now, not a cached one.
      pages: dependencies.pages,
      logger: dependencies.logger,
      ...(approvedIndexes ? { approvedIndexes } : {}),
    });
    if (outcome.kind === 'allowed') continue;
    dependencies.metrics.count('GateRefusals', 1, { gate: outcome.gate });
    throw new CountersignError(
      'forbidden',
      decider === principal ? outcome.message : TEXTS.gateActingFor(decider.userId, outcome.message),
    );
  }
}

/**
 * The approver a delegate acts for, read fresh: their own record must name this principal their
 * delegate until a later date (and they must hold `agent_approve`); otherwise a 403.
 */
export async function readDelegator(
  dependencies: DecisionDependencies,
  principal: UserProfile,
  actingFor: string | undefined,
): Promise<UserProfile | undefined> {
  if (actingFor === undefined) return undefined;
  const delegator = await dependencies.users.getUser(actingFor);
  if (!delegator || !isDelegationActive(delegator, principal.userId, dependencies.clock.now())) {
    throw new CountersignError('forbidden', TEXTS.notActingFor(actingFor), { field: 'body.actingFor' });
  }
  return delegator;
}
