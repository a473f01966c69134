import { isCardRoutedTo } from '../approvals/card-routing.js';
import type { StoredCard } from '../approvals/stored-card.js';
import { type AccessList, hasGrant, type UserProfile } from '../identity.js';
import type { UserDirectory } from '../ports.js';
import { listEveryUser } from './list-every-user.js';

/**
 * Who a channel message is written for: a viewer holding only what every member of its
 * audience holds, so a preview the read gate would withhold from any one of them is withheld
 * from the channel (docs/previews.md: read-gated per viewer, failing closed). The audience is everyone who
 * may decide the card (an approver it is routed to), within the route's group when it names one.
 * An audience of nobody holds nothing: every preview is withheld.
 *
 * @example
 * const viewer = await deriveChannelViewer(users, card, { approverGroup: 'finance' });
 * viewer.pageAccess; // the pages every finance approver may read
 */
export async function deriveChannelViewer(
  users: Pick<UserDirectory, 'listUsersPage'>,
  card: Pick<StoredCard, 'approverGroups'>,
  audience: { readonly approverGroup?: string },
): Promise<UserProfile> {
  const members = (await listEveryUser(users)).filter((user) => isInAudience(user, card, audience));
  const common = (field: 'pageAccess' | 'languageAccess' | 'toolAccess'): AccessList =>
    members.length === 0 ? [] : members.map((member) => member[field]).reduce(intersect);
  return {
    userId: CHANNEL_VIEWER_ID,
    displayName: '',
    // Enough to read a card, nothing more: never `admin`, whose rights the gate would not narrow.
    grants: ['agent_approve'],
    pageAccess: common('pageAccess'),
    languageAccess: common('languageAccess'),
    toolAccess: common('toolAccess'),
    groups: audience.approverGroup === undefined ? [] : [audience.approverGroup],
  };
}

/** The user id of the synthetic channel viewer: it names nobody, and holds only what its audience shares. */
export const CHANNEL_VIEWER_ID = 'channel:least-privileged';

function isInAudience(
  user: UserProfile,
  card: Pick<StoredCard, 'approverGroups'>,
  audience: { readonly approverGroup?: string },
): boolean {
  if (!hasGrant(user, 'agent_approve') || !isCardRoutedTo(card, user)) return false;
  return audience.approverGroup === undefined || (user.groups ?? []).includes(audience.approverGroup);
}

function intersect(left: AccessList, right: AccessList): AccessList {
  if (left === '*') return right;
  if (right === '*') return left;
  const kept = new Set(right);
  return left.filter((item) => kept.has(item));
}
