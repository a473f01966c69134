/**
 * The sharded inbox index (issues #16, #27). One partition of a GSI takes about 1,000 writes a
 * second, and every pause and every decision writes the inbox index; so a waiting card is
 * indexed under partitions per route and shard, `WAITING#<route>#<shard>`:
 *
 * - `<route>` is `@all` for every card (the admins' view and the system's): the card item
 *   itself carries that key, and admins read the cards straight from the index; and
 *   `@approvers` for the approvers' inboxes: one small entry item per card beside it
 *   (`RUN#<runId>` / `INBOX#@approvers`) that names the card's approver groups (none: any
 *   approver may see it).
 * - `<shard>` is a hash of the run id modulo the shard count.
 *
 * An approver's page reads the `@approvers` shards with a filter on the groups (their own, or
 * none), so its Queries do not grow with the groups they belong to: a read evaluates a bounded
 * number of entries per shard and stops once the page is full (inbox-page-query.ts). The
 * cards an approver's entries point to are read in one BatchGetItem, so the card an approver
 * reads is always the one k-of-n tallies update, and its groups are checked again there.
 * Closing a card removes the index key from the card and from its entry (UpdateItem, the right
 * every closing function already holds).
 *
 * All partitions sort by `<pausedAt>#<runId>`, so one position orders them all: the composite
 * cursor is the sort key of the last card shown (or of the last entry read, for a page cut
 * short), and every partition resumes below it. Cards indexed before sharding sit under the
 * single partition `WAITING` on their card item; the inbox reads that partition too during the
 * transition (docs/runbook.md).
 */
import { createHash } from 'node:crypto';
import { INBOX_SHARDS_MAX } from '../../contract/table-layout.js';
import type { InboxRouting } from '../../core/approvals/card-routing.js';
import type { InboxFilter, InboxOrder } from '../../core/approvals/inbox-filter.js';
import { CountersignError } from '../../core/errors.js';
import type { InboxPageFilter } from './inbox-page-query.js';
import { decodeCursor, encodeCursor, hasExactAttributes } from './item-codec.js';

/** The partition every card was indexed under before sharding; read until it is empty. */
const LEGACY_WAITING_PARTITION = 'WAITING';
/** The route every card is indexed under by its card item: what admins (and the system) list. */
export const EVERY_CARD_ROUTE = '@all';
/** The route of the approvers' entries, one per card, each naming the card's groups. */
export const APPROVER_ROUTE = '@approvers';
/** The sort key of a card's approver entry item in its run's partition. */
export const APPROVER_ENTRY_SORT_KEY = `INBOX#${APPROVER_ROUTE}`;
/** The attribute of an entry (and a card) naming the card's approver groups; absent for none. */
export const APPROVER_GROUPS_ATTRIBUTE = 'approverGroups';

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
 * The partitions a viewer's inbox reads: every shard of the every-card route (admins) or of the
 * approvers' route (everyone else), and the pre-sharding partition. The same count whatever the
 * viewer's groups. Reading more shards than a card was written with is harmless, so the count
 * may only grow.
 */
export function partitionsOf(routing: InboxRouting, shards: number): string[] {
  const route = routing.kind === 'every' ? EVERY_CARD_ROUTE : APPROVER_ROUTE;
  const partitions = Array.from({ length: shards }, (_unused, shard) => inboxPartition(route, shard));
  return [...partitions, LEGACY_WAITING_PARTITION];
}

/** The card item's attributes its approver entry carries too, so filters read the entry alone. */
export const ENTRY_FILTERED_ATTRIBUTES = ['configurationId', 'owner', 'toolNames'] as const;

const FILTER_ATTRIBUTES = {
  '#configuration': 'configurationId',
  '#owner': 'owner',
  '#tools': 'toolNames',
} as const satisfies Record<string, (typeof ENTRY_FILTERED_ATTRIBUTES)[number]>;

/**
 * What a page keeps of the partitions it reads, as DynamoDB applies it while reading: for an
 * approver, entries of cards routed to nobody in particular or to one of their groups; for any
 * viewer, the inbox filter (configuration, tool, owner, routed group), on the entry's or the
 * card's plaintext attributes. An entry written before it carried the filtered attributes
 * passes their test; the card read after it is checked again (fail closed). At most 100 groups
 * (the user schema's bound) make ~3.1 KB of expression, under DynamoDB's 4 KB.
 */
export function inboxPageFilterOf(
  routing: InboxRouting,
  filter: InboxFilter = {},
): InboxPageFilter | undefined {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const clauses: string[] = [];
  if (routing.kind === 'groups') {
    names['#groups'] = APPROVER_GROUPS_ATTRIBUTE;
    routing.groups.forEach((group, index) => {
      values[`:group${index}`] = group;
    });
    const routed = routing.groups.map((_group, index) => `contains(#groups, :group${index})`);
    clauses.push(`(${['attribute_not_exists(#groups)', ...routed].join(' OR ')})`);
  }
  if (filter.group !== undefined) {
    names['#groups'] = APPROVER_GROUPS_ATTRIBUTE;
    values[':filterGroup'] = filter.group;
    clauses.push('contains(#groups, :filterGroup)');
  }
  const attributeTests = [
    { name: '#configuration', placeholder: ':configuration', value: filter.configurationId },
    { name: '#owner', placeholder: ':owner', value: filter.owner },
    { name: '#tools', placeholder: ':tool', value: filter.tool },
  ] as const;
  for (const { name, placeholder, value } of attributeTests) {
    if (value === undefined) continue;
    names[name] = FILTER_ATTRIBUTES[name];
    values[placeholder] = value;
    const test = name === '#tools' ? `contains(${name}, ${placeholder})` : `${name} = ${placeholder}`;
    clauses.push(`(attribute_not_exists(${name}) OR ${test})`);
  }
  if (clauses.length === 0) return undefined;
  return { expression: clauses.join(' AND '), names, values };
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

/** Which side of the cursor's position a page reads on: below it newest first, above it oldest first. */
const CURSOR_SIDE: Record<InboxOrder, 'before' | 'after'> = { newest: 'before', deadline: 'after' };

/**
 * The opaque cursor of a position in the merged inbox: the sort key of the last card shown, and
 * the order it was read in (a cursor of one order is refused by the other).
 */
export function encodeInboxCursor(sortKey: string, order: InboxOrder = 'newest'): string {
  const cursor = encodeCursor({ [CURSOR_SIDE[order]]: sortKey });
  if (cursor === undefined)
    throw new CountersignError('internal', 'A card key could not be encoded.', { expose: false });
  return cursor;
}

/** The position a cursor stands for in `order`; anything this code did not write for it is a 400. */
export function decodeInboxCursor(cursor: string, order: InboxOrder = 'newest'): string {
  const side = CURSOR_SIDE[order];
  const key = decodeCursor(
    cursor,
    (candidate) =>
      hasExactAttributes(candidate, [side]) && SORT_KEY_PATTERN.test(String(candidate[side] ?? '')),
  );
  return String(key[side]);
}
