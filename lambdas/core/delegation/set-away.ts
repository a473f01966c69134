import * as z from 'zod/mini';
import { CountersignError } from '../errors.js';
import { type Away, hasGrant, isAdmin, requireGrant, type UserProfile } from '../identity.js';
import type { RunDependencies } from '../run-dependencies.js';
import { TEXTS } from '../texts.js';

/** The longest absence one PUT may set: a delegation must end, and be renewed on purpose. */
export const MAX_AWAY_DAYS = 365;

/** PUT /users/{id}/away: who decides the user's cards while they are away, and until when. */
export const awayRequestSchema = z.strictObject({
  delegate: z.string().check(z.minLength(1), z.maxLength(200)),
  /** An ISO 8601 date and time with its offset (`2026-03-20T18:00:00Z`), in the future. */
  until: z.iso.datetime({ offset: true }),
});
export type AwayRequest = z.infer<typeof awayRequestSchema>;

/** The user's delegation as it now stands; `away` absent: they are not away. */
export interface AwayOutcome {
  userId: string;
  away?: Away;
}

type AwayDependencies = Pick<RunDependencies, 'users' | 'clock' | 'logger'>;

/**
 * An approver goes away: until `until`, the cards routed to them also reach `delegate`, who
 * decides them acting for them (docs/approvers.md, "Delegation"). Set by the approver themself
 * (holding `agent_approve`) or an admin. The delegate must have a user record and hold
 * `agent_approve` themself: a delegate decides only with authority both of them hold.
 *
 * The delegate's pointer is written before the away it points to, so no delegation is ever in
 * force that its delegate cannot find; a pointer left behind by a failure points at an away that
 * does not name them, and counts for nothing.
 *
 * @example
 * await setAway(dependencies, alice, 'alice', { delegate: 'dave', until: '2026-03-20T18:00:00Z' });
 */
export async function setAway(
  dependencies: AwayDependencies,
  principal: UserProfile,
  userId: string,
  request: AwayRequest,
): Promise<AwayOutcome> {
  assertMaySetAway(principal, userId);
  const now = dependencies.clock.now();
  const until = Date.parse(request.until);
  if (until <= now.getTime()) {
    throw new CountersignError('bad-request', TEXTS.awayUntilPast, { field: 'body.until' });
  }
  if (until > now.getTime() + MAX_AWAY_DAYS * 86_400_000) {
    throw new CountersignError('bad-request', TEXTS.awayUntilTooFar(MAX_AWAY_DAYS), { field: 'body.until' });
  }
  if (request.delegate === userId) {
    throw new CountersignError('bad-request', TEXTS.awayOwnDelegate, { field: 'body.delegate' });
  }
  const [delegator, delegate] = await Promise.all([
    dependencies.users.getUser(userId),
    dependencies.users.getUser(request.delegate),
  ]);
  if (!delegator) throw new CountersignError('not-found', TEXTS.adminRecordNotFound('user', userId));
  if (!hasGrant(delegator, 'agent_approve')) {
    throw new CountersignError('bad-request', TEXTS.awayNotAnApprover(userId), { field: 'id' });
  }
  if (!delegate || !hasGrant(delegate, 'agent_approve')) {
    throw new CountersignError('bad-request', TEXTS.awayDelegateCannotApprove(request.delegate), {
      field: 'body.delegate',
    });
  }
  const away: Away = {
    delegate: request.delegate,
    until: new Date(until).toISOString(),
    setBy: principal.userId,
    setAt: now.toISOString(),
  };
  await dependencies.users.pointDelegate(away.delegate, userId, 'add');
  const written = await dependencies.users.setAway(userId, away);
  if (written.kind === 'condition-failed') {
    throw new CountersignError('not-found', TEXTS.adminRecordNotFound('user', userId));
  }
  const previous = delegator.away?.delegate;
  if (previous !== undefined && previous !== away.delegate) {
    await dependencies.users.pointDelegate(previous, userId, 'remove');
  }
  dependencies.logger.info('away set', { userId, delegate: away.delegate, setBy: principal.userId });
  return { userId, away };
}

/**
 * The approver is back: their cards reach only them again. Idempotent (a user who is not away
 * stays so).
 *
 * @example
 * await clearAway(dependencies, alice, 'alice'); // { userId: 'alice' }
 */
export async function clearAway(
  dependencies: AwayDependencies,
  principal: UserProfile,
  userId: string,
): Promise<AwayOutcome> {
  assertMaySetAway(principal, userId);
  const delegator = await dependencies.users.getUser(userId);
  if (!delegator) throw new CountersignError('not-found', TEXTS.adminRecordNotFound('user', userId));
  // The away first: its delegate then decides nothing more for them, pointer or not.
  await dependencies.users.setAway(userId, undefined);
  if (delegator.away) await dependencies.users.pointDelegate(delegator.away.delegate, userId, 'remove');
  dependencies.logger.info('away cleared', { userId, setBy: principal.userId });
  return { userId };
}

/** Only the approver themself (with `agent_approve`) or an admin sets who decides for them. */
function assertMaySetAway(principal: UserProfile, userId: string): void {
  if (isAdmin(principal)) return;
  requireGrant(principal, 'agent_approve');
  if (principal.userId !== userId) throw new CountersignError('forbidden', TEXTS.awayNotYours);
}
