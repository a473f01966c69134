import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { CountersignError } from '../../core/errors.js';

const INBOX = TABLE_LAYOUT.inboxIndex;
/** Rounds of Queries one page may take before it is returned short, with a cursor where it stopped. */
const MAX_ROUNDS = 4;
/** Items one Query evaluates at most (entries are < 1 KB: far below the 1 MB a Query reads). */
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
  /** The cursor's position: only items sorted below it. */
  readonly before?: string;
  readonly filter?: InboxPageFilter;
  /** Items each partition's first Query evaluates; a further round evaluates twice as many. */
  readonly firstEvaluation: number;
}

export interface InboxPageItems {
  /** The page's items (entries or cards), newest first, at most `limit`. */
  readonly items: ReadonlyArray<{ readonly sortKey: string; readonly item: Record<string, unknown> }>;
  /** Where the next page starts (below it); undefined when nothing is left. */
  readonly nextBefore?: string;
}

interface PartitionRead {
  readonly partition: string;
  startKey?: Record<string, unknown>;
  /** The sort key of the last item evaluated: everything above it has been read. */
  reached?: string;
  exhausted: boolean;
}

/**
 * One page of the merged inbox index, newest first: every partition is queried below the
 * cursor, evaluating `firstEvaluation` items each (DynamoDB's `Limit` counts items evaluated,
 * before the filter); the page is certain down to the highest position any unfinished
 * partition reached, and once that holds `limit` matches, it is returned. Otherwise the
 * unfinished partitions are read further, twice as many items a round; after `MAX_ROUNDS` the
 * page is returned with what is certain and a cursor where reading stopped, so a viewer who
 * sees very few of the waiting cards gets short pages rather than an unbounded read. Every
 * card appears once (items are keyed by run), and a cursor is a position in the one order all
 * partitions share, so pages neither skip nor repeat.
 *
 * @example
 * const page = await queryInboxPage(client, tableName, { partitions, limit: 20, firstEvaluation: 20 });
 */
export async function queryInboxPage(
  client: DynamoDBDocumentClient,
  tableName: string,
  query: InboxPageQuery,
): Promise<InboxPageItems> {
  const reads: PartitionRead[] = query.partitions.map((partition) => ({ partition, exhausted: false }));
  const matches = new Map<unknown, { sortKey: string; item: Record<string, unknown> }>();
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
    const frontier = highestReached(reads);
    const certain = [...matches.values()]
      .filter(({ sortKey }) => frontier === undefined || sortKey >= frontier)
      .sort((left, right) => (left.sortKey < right.sortKey ? 1 : left.sortKey > right.sortKey ? -1 : 0));
    if (certain.length >= query.limit || frontier === undefined) {
      const items = certain.slice(0, query.limit);
      const more = certain.length > query.limit || frontier !== undefined;
      const last = items.at(-1);
      return { items, ...(more && last !== undefined ? { nextBefore: last.sortKey } : {}) };
    }
    if (round === MAX_ROUNDS) return { items: certain, nextBefore: frontier };
    evaluation = Math.min(evaluation * 2, MAX_EVALUATED_PER_QUERY);
  }
}

/** The highest position an unfinished partition has reached; undefined when all are read to the end. */
function highestReached(reads: readonly PartitionRead[]): string | undefined {
  let highest: string | undefined;
  for (const read of reads) {
    if (read.exhausted) continue;
    // A GSI Query's LastEvaluatedKey always carries the index keys.
    if (read.reached === undefined) {
      throw new CountersignError('internal', 'The inbox index stopped without its position.', {
        expose: false,
      });
    }
    if (highest === undefined || read.reached > highest) highest = read.reached;
  }
  return highest;
}

function queryPartition(
  client: DynamoDBDocumentClient,
  tableName: string,
  query: InboxPageQuery,
  read: PartitionRead,
  evaluation: number,
) {
  const { before, filter } = query;
  return client.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: INBOX.name,
      KeyConditionExpression:
        before === undefined ? '#inboxPk = :partition' : '#inboxPk = :partition AND #inboxSk < :before',
      ...(filter ? { FilterExpression: filter.expression } : {}),
      ExpressionAttributeNames: {
        '#inboxPk': INBOX.partitionKey,
        ...(before === undefined ? {} : { '#inboxSk': INBOX.sortKey }),
        ...filter?.names,
      },
      ExpressionAttributeValues: {
        ':partition': read.partition,
        ...(before === undefined ? {} : { ':before': before }),
        ...filter?.values,
      },
      ScanIndexForward: false,
      Limit: evaluation,
      ...(read.startKey ? { ExclusiveStartKey: read.startKey } : {}),
    }),
  );
}
