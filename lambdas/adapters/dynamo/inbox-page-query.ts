import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import type { InboxOrder } from '../../core/approvals/inbox-filter.js';
import { CountersignError } from '../../core/errors.js';

const INBOX = TABLE_LAYOUT.inboxIndex;
/** Rounds of Queries one page may take before it is returned short, with a cursor where it stopped. */
const MAX_ROUNDS = 4;
/** Items one Query evaluates at most (entries are a few KB at most: below the 1 MB a Query reads). */
const MAX_EVALUATED_PER_QUERY = 1_000;

/** Which items of the partitions a page keeps: a filter expression DynamoDB applies as it reads. */
export interface InboxPageFilter {
  readonly expression: string;
  readonly names: Readonly<Record<string, string>>;
  readonly values: Readonly<Record<string, unknown>>;
}

export interface InboxPageQuery {
  /** The index partitions the page merges (inbox-index.ts, `partitionsOf`). */
  readonly partitions: readonly string[];
  readonly limit: number;
  /** `newest` reads down from the top (below the position), `deadline` up from the oldest (above it). */
  readonly order: InboxOrder;
  /** The cursor's position: only items sorted past it in `order`. */
  readonly position?: string;
  readonly filter?: InboxPageFilter;
  /** Items each partition's first Query evaluates; a further round evaluates twice as many. */
  readonly firstEvaluation: number;
}

export interface InboxPageItems {
  /** The page's items (entries or cards) in `order`, at most `limit`. */
  readonly items: ReadonlyArray<{ readonly sortKey: string; readonly item: Record<string, unknown> }>;
  /** Where the next page starts (past it); undefined when nothing is left. */
  readonly nextPosition?: string;
}

interface PartitionRead {
  readonly partition: string;
  startKey?: Record<string, unknown>;
  /** The sort key of the last item evaluated: everything before it in the order has been read. */
  reached?: string;
  exhausted: boolean;
}

/**
 * One page of the merged inbox index in `order` (newest first, or oldest first for `deadline`):
 * every partition is queried past the cursor, evaluating `firstEvaluation` items each
 * (DynamoDB's `Limit` counts items evaluated, before the filter); the page is certain up to
 * the nearest position any unfinished partition reached, and once that holds `limit` matches,
 * it is returned. Otherwise the
 * unfinished partitions are read further, twice as many items a round; after `MAX_ROUNDS` the
 * page is returned with what is certain and a cursor where reading stopped, so a viewer who
 * sees very few of the waiting cards gets short pages rather than an unbounded read. Every
 * card appears once (items are keyed by run), and a cursor is a position in the one order all
 * partitions share, so pages neither skip nor repeat.
 *
 * @example
 * const page = await queryInboxPage(client, tableName, { partitions, limit: 20, order: 'newest', firstEvaluation: 20 });
 */
export async function queryInboxPage(
  client: DynamoDBDocumentClient,
  tableName: string,
  query: InboxPageQuery,
): Promise<InboxPageItems> {
  const reads: PartitionRead[] = query.partitions.map((partition) => ({ partition, exhausted: false }));
  const matches = new Map<unknown, { sortKey: string; item: Record<string, unknown> }>();
  // Newest first sorts descending: -1 puts the higher key first.
  const sign = query.order === 'newest' ? -1 : 1;
  let evaluation = Math.min(query.firstEvaluation, MAX_EVALUATED_PER_QUERY);
  for (let round = 1; ; round += 1) {
    const pending = reads.filter((read) => !read.exhausted);
    const outputs = await Promise.all(
      pending.map((read) => queryPartition(client, tableName, query, read, evaluation)),
    );
    pending.forEach((read, index) => {
      const output = outputs[index];
      for (const item of output?.Items ?? []) {
        const sortKey = item[INBOX.sortKey];
        // One card has one entry per partition kind: the run's partition key names it.
        if (typeof sortKey === 'string') matches.set(item[TABLE_LAYOUT.partitionKey], { sortKey, item });
      }
      read.startKey = output?.LastEvaluatedKey;
      const reached = read.startKey?.[INBOX.sortKey];
      read.reached = typeof reached === 'string' ? reached : undefined;
      read.exhausted = read.startKey === undefined;
    });
    const frontier = nearestReached(reads, sign);
    const certain = [...matches.values()]
      .filter(({ sortKey }) => frontier === undefined || compare(sortKey, frontier) * sign <= 0)
      .sort((left, right) => compare(left.sortKey, right.sortKey) * sign);
    if (certain.length >= query.limit || frontier === undefined) {
      const items = certain.slice(0, query.limit);
      const more = certain.length > query.limit || frontier !== undefined;
      const last = items.at(-1);
      return { items, ...(more && last !== undefined ? { nextPosition: last.sortKey } : {}) };
    }
    if (round === MAX_ROUNDS) return { items: certain, nextPosition: frontier };
    evaluation = Math.min(evaluation * 2, MAX_EVALUATED_PER_QUERY);
  }
}

/**
 * The position an unfinished partition has reached that is nearest the page's start (the
 * highest for newest first, the lowest for oldest first); undefined when all are read to the end.
 */
function nearestReached(reads: readonly PartitionRead[], sign: number): string | undefined {
  let nearest: string | undefined;
  for (const read of reads) {
    if (read.exhausted) continue;
    // A GSI Query's LastEvaluatedKey always carries the index keys.
    if (read.reached === undefined) {
      throw new CountersignError('internal', 'The inbox index stopped without its position.', {
        expose: false,
      });
    }
    if (nearest === undefined || compare(read.reached, nearest) * sign < 0) nearest = read.reached;
  }
  return nearest;
}

function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

function queryPartition(
  client: DynamoDBDocumentClient,
  tableName: string,
  query: InboxPageQuery,
  read: PartitionRead,
  evaluation: number,
) {
  const { position, filter } = query;
  const newest = query.order === 'newest';
  return client.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: INBOX.name,
      KeyConditionExpression:
        position === undefined
          ? '#inboxPk = :partition'
          : `#inboxPk = :partition AND #inboxSk ${newest ? '<' : '>'} :position`,
      ...(filter ? { FilterExpression: filter.expression } : {}),
      ExpressionAttributeNames: {
        '#inboxPk': INBOX.partitionKey,
        ...(position === undefined ? {} : { '#inboxSk': INBOX.sortKey }),
        ...filter?.names,
      },
      ExpressionAttributeValues: {
        ':partition': read.partition,
        ...(position === undefined ? {} : { ':position': position }),
        ...filter?.values,
      },
      ScanIndexForward: !newest,
      Limit: evaluation,
      ...(read.startKey ? { ExclusiveStartKey: read.startKey } : {}),
    }),
  );
}
