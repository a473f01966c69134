import { type RoutedCard, reachesThroughGroups } from '../approvals/card-routing.js';
import { hasGrant, type UserProfile } from '../identity.js';
import type { UserDirectory } from '../ports.js';

/**
 * Whether `delegator` is away with `delegateId` as their delegate at `now`: their own record
 * names the delegate, the end date has not passed, and they still hold `agent_approve` (an
 * approver who may decide nothing delegates nothing).
 *
 * @example
 * isDelegationActive(alice, 'dave', now) // true while alice.away = { delegate: 'dave', until: later }
 */
export function isDelegationActive(delegator: UserProfile, delegateId: string, now: Date): boolean {
  const away = delegator.away;
  return (
    away !== undefined &&
    away.delegate === delegateId &&
    delegator.userId !== delegateId &&
    Date.parse(away.until) > now.getTime() &&
    hasGrant(delegator, 'agent_approve')
  );
}

/**
 * The approvers `viewer` decides for now: those their record points at (`delegatedBy`) whose own
 * record names them delegate, until a later date. One user read per pointer, none for a viewer
 * nobody delegated to (every approver's inbox but a delegate's costs nothing more).
 *
 * @example
 * const delegators = await activeDelegatorsOf(dependencies, dave, now); // [alice]
 */
export async function activeDelegatorsOf(
  dependencies: { users: Pick<UserDirectory, 'getUser'> },
  viewer: UserProfile,
  now: Date,
): Promise<UserProfile[]> {
  const pointers = [...new Set(viewer.delegatedBy ?? [])].filter((userId) => userId !== viewer.userId);
  const records = await Promise.all(pointers.map((userId) => dependencies.users.getUser(userId)));
  return records
    .filter((record): record is UserProfile => record !== undefined)
    .filter((record) => isDelegationActive(record, viewer.userId, now))
    .sort((left, right) => (left.userId < right.userId ? -1 : left.userId > right.userId ? 1 : 0));
}

/**
 * The delegator a card reaches `viewer` through, when it does not reach them in their own right:
 * the first (by user id) of their active delegators the card is routed to.
 *
 * @example
 * delegatorReaching(card, delegators) // alice, or undefined
 */
export function delegatorReaching(
  card: RoutedCard,
  delegators: readonly UserProfile[],
): UserProfile | undefined {
  return delegators.find((delegator) => reachesThroughGroups(card, delegator));
}
