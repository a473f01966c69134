import { CountersignError } from '../errors.js';
import type { UserProfile } from '../identity.js';
import type { PrincipalSource } from '../principal.js';
import { TEXTS } from '../texts.js';

/**
 * A run executes as its owner's user record (docs/approvers.md): its steps read that record
 * and fail the run without it. A user known only from their identity provider's groups is
 * therefore refused at the start (403, naming what is missing) instead of being handed a run
 * id for work that cannot finish. Records are not provisioned from token claims: that would
 * turn a group membership of one moment into lasting countersign grants.
 */
export function requireUserRecord(principal: UserProfile, source: PrincipalSource): void {
  if (source === 'user-record') return;
  throw new CountersignError('forbidden', TEXTS.noUserRecord(principal.userId));
}
