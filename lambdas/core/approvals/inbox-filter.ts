import { routedGroupsOf } from './card-routing.js';
import type { StoredCard } from './stored-card.js';

/**
 * What an approver narrows the inbox to (GET /inbox's query): cards of one configuration, with
 * one tool among their calls, of one owner, or routed to one group. Every field is plaintext on
 * the stored card, so a card is matched before anything is unsealed.
 */
export interface InboxFilter {
  configurationId?: string;
  tool?: string;
  owner?: string;
  /** Cards routed to this approver group, or escalated to it (one the viewer is in, unless an admin). */
  group?: string;
}

/**
 * In which order the inbox lists: `newest` paused first, or `deadline`, the window closing
 * soonest first. Every card of a deployment waits the same approval timeout, so the oldest pause
 * closes first; a card paused under an earlier, longer timeout may close later than its place says.
 */
export type InboxOrder = 'newest' | 'deadline';

/** Whether a card is one the filter keeps (an empty filter keeps every card). */
export function matchesInboxFilter(
  card: Pick<StoredCard, 'configurationId' | 'toolNames' | 'owner' | 'approverGroups' | 'escalation'>,
  filter: InboxFilter,
): boolean {
  if (filter.configurationId !== undefined && card.configurationId !== filter.configurationId) return false;
  if (filter.tool !== undefined && !card.toolNames.includes(filter.tool)) return false;
  if (filter.owner !== undefined && card.owner !== filter.owner) return false;
  if (filter.group !== undefined && !routedGroupsOf(card).includes(filter.group)) return false;
  return true;
}
