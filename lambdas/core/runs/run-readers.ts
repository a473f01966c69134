import { isCardRoutedTo } from '../approvals/card-routing.js';
import type { StoredCard } from '../approvals/stored-card.js';
import { hasGrant, isAdmin, type UserProfile } from '../identity.js';
import type { RunRecord } from '../run-record.js';

/** Who reads a run, and as whom: what the run's view and audit show depends on it. */
export type RunReader = 'owner' | 'admin' | 'approver';

/**
 * Whether `viewer` may read a run (GET /runs/{id}, its audit): its owner; an admin; or an approver
 * the run's card was routed to, who could decide it (`agent_approve` and the card's groups, as
 * the inbox and the decision judge it). Anyone else gets the 404 of a run that does not exist,
 * so run ids cannot be probed. A run that never paused has no card and no approver reader.
 *
 * @example
 * const reader = readerOfRun(viewer, record, card); // undefined: answer 404
 */
export function readerOfRun(
  viewer: UserProfile,
  record: Pick<RunRecord, 'owner'>,
  card: Pick<StoredCard, 'approverGroups'> | undefined,
): RunReader | undefined {
  if (record.owner === viewer.userId) return 'owner';
  if (isAdmin(viewer)) return 'admin';
  if (card !== undefined && hasGrant(viewer, 'agent_approve') && isCardRoutedTo(card, viewer))
    return 'approver';
  return undefined;
}
