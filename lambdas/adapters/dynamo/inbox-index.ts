/**
 * The sharded inbox index (issue #16). One partition of a GSI takes about 1,000 writes a
 * second, and every pause and every decision writes the inbox index; so a waiting card is
 * indexed under partitions per route and shard, `WAITING#<route>#<shard>`:
 *
 * - `<route>` is an approver group the card is routed to, `*` for a card routed to every
 *   approver (the default), and `@all` for every card (the admins' view and the system's).
 * - `<shard>` is a hash of the run id modulo the shard count.
 *
 * A GSI key puts an item in ONE partition, and a card may go to several groups. So the card
 * item carries the every-card key (admins and the system read the cards straight from the
 * index, as before), and each group the card is routed to (or the open route) has a small
 * entry item beside the card (`RUN#<runId>` / `INBOX#<route>`) with that route's key; an
 * approver's inbox reads the card items its entries point to in one BatchGetItem, so the
 * card an approver reads is always the one k-of-n tallies update. Closing a card removes the
 * index key from the card and from each entry (UpdateItem, the right every closing function
 * already holds). The price: one more write on pause and one more on close per group.
 *
 * All partitions sort by `<pausedAt>#<runId>`, so one position orders them all: the composite
 * cursor is the sort key of the last card shown, and every partition resumes below it.
 * Cards indexed before sharding sit under the single partition `WAITING` on their card item;
 * the inbox reads that partition too during the transition (docs/runbook.md).
 */
import { createHash } from 'node:crypto';
import { INBOX_SHARDS_MAX } from '../../contract/table-layout.js';
import { type InboxRouting, type RoutedCard, routedGroupsOf } from '../../core/approvals/card-routing.js';
import { CountersignError } from '../../core/errors.js';
import { decodeCursor, encodeCursor, hasExactAttributes } from './item-codec.js';

/** The partition every card was indexed under before sharding; read until it is empty. */
const LEGACY_WAITING_PARTITION = 'WAITING';
/** The route of a card that any approver may decide. */
export const OPEN_ROUTE = '*';
/** The route every card is also indexed under: what admins (and the system) list. */
export const EVERY_CARD_ROUTE = '@all';
/** The sort key of an index entry item in its run's partition. */
export const INBOX_ENTRY_SORT_PREFIX = 'INBOX#';

/** Refuses a shard count that is not an integer from 1 to 64, naming the bad value. */
export function assertInboxShards(shards: number): void {
  if (!Number.isInteger(shards) || shards < 1 || shards > INBOX_SHARDS_MAX) {
    throw new CountersignError(
      'configuration',
      `The inbox shard count must be an integer from 1 to ${INBOX_SHARDS_MAX}; got ${String(shards)}.`,
      { expose: false },
    );
  }
}

/** A run's shard: stable for the run, spread evenly over the shards. */
export function shardOf(runId: string, shards: number): number {
  return createHash('sha256').update(runId).digest().readUInt32BE(0) % shards;
}

export function inboxPartition(route: string, shard: number): string {
  return `WAITING#${route}#${shard}`;
}

/**
 * The routes a card has an index entry item for: the groups it reaches (its own and those its
 * escalation added), or the open route. (The every-card route needs no entry: the card item
 * itself carries that index key.)
 */
export function entryRoutesOfCard(card: RoutedCard): string[] {
  const groups = routedGroupsOf(card);
  return groups.length === 0 ? [OPEN_ROUTE] : groups;
}

/**
 * The partitions a viewer's inbox reads: every shard of each route they reach, and the
 * pre-sharding partition. Bounded by the shard count times the viewer's groups plus one.
 * Reading more shards than a card was written with is harmless, so the count may only grow.
 */
export function partitionsOf(routing: InboxRouting, shards: number): string[] {
  const routes = routing.kind === 'every' ? [EVERY_CARD_ROUTE] : [OPEN_ROUTE, ...routing.groups];
  const partitions = routes.flatMap((route) =>
    Array.from({ length: shards }, (_unused, shard) => inboxPartition(route, shard)),
  );
  return [...partitions, LEGACY_WAITING_PARTITION];
}

export function inboxSortKey(card: { pausedAt: string; runId: string }): string {
  return `${card.pausedAt}#${card.runId}`;
}

/**
 * The index also lists claimed decisions that were not delivered yet (the same sparse GSI,
 * partitions `UNDELIVERED#<shard>`, sorted by when they were claimed): marking one delivered
 * REMOVEs its index key. The waiting-runs probe reads them to redeliver what a failed request
 * left behind; no inbox reads these partitions.
 */
export function undeliveredPartition(shard: number): string {
  return `UNDELIVERED#${shard}`;
}

export function undeliveredSortKey(decision: { decidedAt: string; runId: string }): string {
  return `${decision.decidedAt}#${decision.runId}`;
}

const SORT_KEY_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z#[A-Za-z0-9-]{1,100}$/;

/** The opaque cursor of a position in the merged inbox: the sort key of the last card shown. */
export function encodeInboxCursor(sortKey: string): string {
  const cursor = encodeCursor({ before: sortKey });
  if (cursor === undefined)
    throw new CountersignError('internal', 'A card key could not be encoded.', { expose: false });
  return cursor;
}

/** The position a cursor stands for; anything this code did not write is a 400. */
export function decodeInboxCursor(cursor: string): string {
  const key = decodeCursor(
    cursor,
    (candidate) => hasExactAttributes(candidate, ['before']) && SORT_KEY_PATTERN.test(candidate.before ?? ''),
  );
  return String(key.before);
}
