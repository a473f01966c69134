import { type CardView, refuseUnreadableCards, viewCards } from '../approvals/card-reader.js';
import { type InboxRouting, inboxRoutingOf, isCardRoutedTo } from '../approvals/card-routing.js';
import type { InboxFilter, InboxOrder } from '../approvals/inbox-filter.js';
import type { StoredCard } from '../approvals/stored-card.js';
import type { UnopenableCard } from '../approvals/unopenable-card.js';
import { activeDelegatorsOf, delegatorReaching } from '../delegation/delegation.js';
import { isAdmin, requireGrant, type UserProfile } from '../identity.js';
import type { InboxDependencies } from '../run-dependencies.js';

export const INBOX_PAGE_SIZE_DEFAULT = 20;
export const INBOX_PAGE_SIZE_MAX = 100;
/**
 * An inbox page stops before its cards pass 1 MB as the surface renders them (JSON or the
 * page's HTML) and returns a cursor for the rest: Lambda refuses responses over 6 MB, and one
 * oversized page would fail for every approver. Its first card is always included, so paging
 * moves on; a card alone stays far below (arguments excerpted, at most 50 calls a turn).
 */
export const INBOX_PAGE_MAX_BYTES = 1_000_000;
/** Room kept under the bound for what a page wraps its cards in (the JSON envelope, the cursor). */
const INBOX_PAGE_ENVELOPE_BYTES = 4_096;

/** An inbox entry: a card, or the flagged placeholder of one that cannot be opened. */
export type InboxEntry = CardView | UnopenableCard;

/**
 * The inbox: cards of runs waiting for a decision and routed to the viewer (admins: all),
 * newest first. One query per index partition the viewer reaches and one read of the cards per
 * page; the card reader unseals the cards (never the transcripts) and views them for the viewer,
 * so each preview meets the read gate.
 *
 * Failures are isolated per card: a card that cannot be opened (tampered, copied from another
 * run, malformed) is listed as its placeholder (the reader reported it and ended its run); the
 * other cards of the page render as always.
 */
export async function listInbox(
  dependencies: InboxDependencies,
  viewer: UserProfile,
  options: {
    limit: number;
    cursor?: string;
    /** @default 'newest' */
    order?: InboxOrder;
    /** Narrows the cards (GET /inbox's filters); matched before anything is unsealed. */
    filter?: InboxFilter;
    /** @default INBOX_PAGE_MAX_BYTES */
    maxBytes?: number;
    /** The bytes one card takes on the surface that answers. @default its JSON, UTF-8 */
    measureCard?: (card: CardView) => number;
  },
): Promise<{ cards: InboxEntry[]; cursor?: string }> {
  requireGrant(viewer, 'agent_approve');
  // A delegate's inbox also holds the cards of those away who named them (one read per pointer).
  const delegators = await activeDelegatorsOf(dependencies, viewer, dependencies.clock.now());
  const routing = routingOf(viewer, delegators, options.filter);
  // A group the viewer (or whom they act for) is not in routes them nothing: an empty inbox.
  if (routing === undefined) return { cards: [] };
  const listed = await dependencies.runs.listWaitingCards({
    limit: options.limit,
    routing,
    ...(options.order === undefined ? {} : { order: options.order }),
    ...(options.filter === undefined ? {} : { filter: options.filter }),
    ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
  });
  // The index partitions already route; the card's own groups decide, failing closed.
  const reaches = (card: StoredCard) =>
    isCardRoutedTo(card, viewer) || delegatorReaching(card, delegators) !== undefined;
  const page = { ...listed, cards: listed.cards.filter(reaches) };
  // Items that did not even parse have no place in the order: their placeholders come last.
  const [readings, unreadable] = await Promise.all([
    viewCards(dependencies, viewer, page.cards, delegators),
    refuseUnreadableCards(dependencies, page.unreadableRunIds ?? []),
  ]);
  const entries = readings.map(({ stored, reading }) => ({
    stored,
    entry: reading.kind === 'viewed' ? reading.view : reading.placeholder,
  }));
  const kept = keepWithinBytes(entries, options.maxBytes ?? INBOX_PAGE_MAX_BYTES, options.measureCard);
  const last = kept.at(-1);
  const cursor =
    kept.length < entries.length && last !== undefined
      ? dependencies.runs.waitingCardCursor(last.stored, options.order)
      : page.cursor;
  return { cards: [...kept.map(({ entry }) => entry), ...unreadable], ...(cursor ? { cursor } : {}) };
}

/**
 * The viewer's routing (with the groups of those away who named them); none when the inbox is
 * filtered by a group neither the viewer nor any of them is in.
 */
function routingOf(
  viewer: UserProfile,
  delegators: readonly UserProfile[],
  filter: InboxFilter | undefined,
): InboxRouting | undefined {
  const group = filter?.group;
  const reached = (user: UserProfile) => (user.groups ?? []).includes(group ?? '');
  if (group === undefined || isAdmin(viewer) || [viewer, ...delegators].some(reached)) {
    return inboxRoutingOf(viewer, delegators);
  }
  return undefined;
}

/** The leading entries whose sizes together stay within `maxBytes`; never fewer than one. */
function keepWithinBytes<Entry extends { entry: InboxEntry }>(
  entries: Entry[],
  maxBytes: number,
  measureCard: (card: CardView) => number = measureJson,
): Entry[] {
  let total = INBOX_PAGE_ENVELOPE_BYTES;
  for (const [position, { entry }] of entries.entries()) {
    total += ('unopenable' in entry ? measureJson(entry) : measureCard(entry)) + 1;
    if (total > maxBytes && position > 0) return entries.slice(0, position);
  }
  return entries;
}

const encoder = new TextEncoder();

function measureJson(entry: InboxEntry): number {
  return encoder.encode(JSON.stringify(entry)).byteLength;
}
