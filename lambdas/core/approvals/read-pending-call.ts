import { activeDelegatorsOf, delegatorReaching } from '../delegation/delegation.js';
import { CountersignError } from '../errors.js';
import { hasGrant, type UserProfile } from '../identity.js';
import type { InboxDependencies } from '../run-dependencies.js';
import { TEXTS } from '../texts.js';
import { readStoredCard, unsealCard } from './card-reader.js';
import { isCardRoutedTo } from './card-routing.js';
import { isCardUndecided } from './stored-card.js';

/** GET /runs/{id}/calls/{index}: one pending call with its whole arguments. */
export interface PendingCallView {
  runId: string;
  turn: number;
  /** The card's turn digest: a page compares it with the card it shows, so it never mixes turns. */
  digest: string;
  index: number;
  tool: string;
  /** Exactly what the model proposed, as sealed on the card; never excerpted. */
  arguments: unknown;
}

/**
 * The whole arguments of a call on a waiting card: what a card excerpts is one request away,
 * so an approver can always read everything they approve. Readable by whoever may read the
 * card: an approver (`agent_approve`) as in the inbox, and the run's owner as in GET /runs/{id}.
 * Anyone else gets a 403 whether or not the run exists; a run that does not wait (or does not
 * exist) is a 404, and an index past the card's calls is a 404 naming the index.
 *
 * @example
 * const call = await readPendingCall(dependencies, approver, runId, 0);
 * call.arguments // { pageId: '12', description: '…every character…' }
 */
export async function readPendingCall(
  dependencies: InboxDependencies,
  viewer: UserProfile,
  runId: string,
  index: number,
): Promise<PendingCallView> {
  const read = await readStoredCard(dependencies, runId);
  const stored = read.kind === 'stored' ? read.stored : undefined;
  if (!hasGrant(viewer, 'agent_approve') && stored?.owner !== viewer.userId) {
    throw new CountersignError('forbidden', TEXTS.grantRefused('agent_approve'));
  }
  if (read.kind === 'unopenable') throw new CountersignError('gone', TEXTS.cardUnopenable);
  if (!stored || !isCardUndecided(stored)) throw new CountersignError('not-found', TEXTS.runNotFound);
  // The owner reads their own run's calls; an approver only those of cards routed to them, or
  // to an approver away who named them their delegate.
  if (stored.owner !== viewer.userId && !isCardRoutedTo(stored, viewer)) {
    const delegators = await activeDelegatorsOf(dependencies, viewer, dependencies.clock.now());
    if (delegatorReaching(stored, delegators) === undefined)
      throw new CountersignError('not-found', TEXTS.runNotFound);
  }
  // Unsealed by the one card reader, so index n here is call n on the card.
  const unsealed = await unsealCard(dependencies, stored);
  if (unsealed.kind === 'unopenable') throw new CountersignError('gone', TEXTS.cardUnopenable);
  const call = unsealed.card.pendingCalls[index];
  if (call === undefined) {
    throw new CountersignError('not-found', TEXTS.callNotOnCard(index, unsealed.card.pendingCalls.length), {
      field: 'index',
    });
  }
  return {
    runId,
    turn: stored.turn,
    digest: stored.digest,
    index,
    tool: call.tool,
    arguments: call.arguments,
  };
}
