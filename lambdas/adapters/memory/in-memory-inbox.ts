import { isCardInRouting } from '../../core/approvals/card-routing.js';
import { matchesInboxFilter } from '../../core/approvals/inbox-filter.js';
import { isCardUndecided, type StoredCard } from '../../core/approvals/stored-card.js';
import type { WaitingCardsPage } from '../../core/ports.js';
import { decodeInboxCursor, encodeInboxCursor, inboxSortKey } from '../dynamo/inbox-index.js';
import { assertPageLimit } from '../dynamo/item-codec.js';
import type { WaitingCardsRequest } from '../dynamo/run-item-schemas.js';

/**
 * One page of the waiting cards in memory, read as the DynamoDB adapter reads the inbox index: the
 * same routing, filters, order and cursor, so the contract tests hold for both.
 */
export function pageWaitingCards(
  cards: Iterable<StoredCard>,
  options: WaitingCardsRequest,
): WaitingCardsPage {
  assertPageLimit(options.limit);
  const order = options.order ?? 'newest';
  const position = options.cursor === undefined ? undefined : decodeInboxCursor(options.cursor, order);
  const routing = options.routing ?? { kind: 'every' };
  const filter = options.filter ?? {};
  const sign = order === 'newest' ? 1 : -1;
  const past = (sortKey: string) =>
    position === undefined || (order === 'newest' ? sortKey < position : sortKey > position);
  const ordered = [...cards]
    .filter(
      (card) => isCardUndecided(card) && isCardInRouting(card, routing) && matchesInboxFilter(card, filter),
    )
    .map((card) => ({ card, sortKey: inboxSortKey(card) }))
    .filter(({ sortKey }) => past(sortKey))
    .sort((left, right) => (left.sortKey < right.sortKey ? sign : left.sortKey > right.sortKey ? -sign : 0));
  const page = ordered.slice(0, options.limit);
  const last = page.at(-1);
  return {
    cards: page.map(({ card }) => card),
    ...(ordered.length > options.limit && last !== undefined
      ? { cursor: encodeInboxCursor(last.sortKey, order) }
      : {}),
  };
}
