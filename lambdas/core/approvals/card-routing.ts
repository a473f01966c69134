import * as z from 'zod/mini';
import { isAdmin, type UserProfile } from '../identity.js';
import type { StoredCard } from './stored-card.js';

/**
 * A group name a card may be routed to. Restricted to what can sit inside an index partition
 * key (`WAITING#<group>#<shard>`) unescaped: no `#`, no `*`, no `@` (the reserved routes).
 */
export const approverGroupSchema = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(64),
    z.regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]*$/, 'use letters, digits, ".", "_" or "-"'),
  );

/** At most this many groups per card: each is one index write on pause and one on close. */
export const MAX_APPROVER_GROUPS = 10;

/**
 * The approver groups a configuration's or a task's cards go to. Absent means every holder of
 * `agent_approve` (the behaviour before routing); present, it names one group or more.
 */
export const approverGroupsSchema = z
  .array(approverGroupSchema)
  .check(z.minLength(1), z.maxLength(MAX_APPROVER_GROUPS));

/** Which index partitions a viewer's inbox reads. */
export type InboxRouting =
  | { kind: 'every' }
  /** Cards routed to nobody in particular, and cards routed to one of `groups`. */
  | { kind: 'groups'; groups: readonly string[] };

/**
 * Admins read every card; an approver reads cards routed to no group and those routed to theirs, and a
 * delegate also those routed to the groups of the approvers away who named them (`delegators`).
 */
export function inboxRoutingOf(viewer: UserProfile, delegators: readonly UserProfile[] = []): InboxRouting {
  if (isAdmin(viewer)) return { kind: 'every' };
  // A user group that could not name a route (see approverGroupSchema) can route nothing.
  const groups = [...new Set([viewer, ...delegators].flatMap((user) => user.groups ?? []))].filter(
    (group) => approverGroupSchema.safeParse(group).success,
  );
  return { kind: 'groups', groups: groups.sort() };
}

/** What routing reads of a stored card: its groups and how far its escalation went. */
export type RoutedCard = Pick<StoredCard, 'approverGroups' | 'escalation'>;

/**
 * Whether a card is in the inbox a routing reads: every card for admins; for an approver, a
 * card routed to nobody in particular or to one of the routing's groups (its own and those its
 * escalation added). The inbox's stores check it on every card they return, whatever their index
 * matched.
 */
export function isCardInRouting(card: RoutedCard, routing: InboxRouting): boolean {
  if (routing.kind === 'every') return true;
  const groups = routedGroupsOf(card);
  return groups.length === 0 || groups.some((group) => routing.groups.includes(group));
}

/**
 * The groups the card's escalation has routed it to so far, in step order, without repeats.
 *
 * @example
 * escalatedGroupsOf({ escalation: { steps, reached: 1, notified: 1 } }) // ['leads']
 */
export function escalatedGroupsOf(card: RoutedCard): string[] {
  const escalation = card.escalation;
  if (escalation === undefined) return [];
  return [...new Set(escalation.steps.slice(0, escalation.reached).flatMap((step) => step.approverGroups))];
}

/**
 * The groups a card reaches now: those it was routed to, and those its escalation added. Empty:
 * every approver (an escalation adds nobody to "everyone"; it only announces the card again).
 *
 * @example
 * routedGroupsOf({ approverGroups: ['finance'], escalation }) // ['finance', 'leads']
 */
export function routedGroupsOf(card: RoutedCard): string[] {
  const groups = card.approverGroups ?? [];
  if (groups.length === 0) return [];
  return [...new Set([...groups, ...escalatedGroupsOf(card)])];
}

/**
 * Whether `viewer` may see a card: admins always, anyone when it is routed to nobody in
 * particular, otherwise a member of one of the groups it reaches (its own and those its escalation
 * added). A card not routed to a viewer is, for them, a card that does not exist (404).
 */
export function isCardRoutedTo(card: RoutedCard, viewer: UserProfile): boolean {
  return isAdmin(viewer) || reachesThroughGroups(card, viewer);
}

/**
 * Whether a card reaches `delegator` by routing, as it would reach them as an approver: routed
 * to every approver, or to one of their groups. An admin's view of every card is not routing
 * and is not passed on: a delegate acting for an admin reaches what the admin's groups reach.
 *
 * @example
 * reachesThroughGroups({ approverGroups: ['finance'] }, alice) // true when alice is in finance
 */
export function reachesThroughGroups(card: RoutedCard, delegator: UserProfile): boolean {
  const groups = routedGroupsOf(card);
  if (groups.length === 0) return true;
  const member = new Set(delegator.groups ?? []);
  return groups.some((group) => member.has(group));
}
