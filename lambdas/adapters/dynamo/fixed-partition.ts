import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { assertPageLimit, decodeCursor, encodeCursor, hasExactAttributes } from './item-codec.js';

/** Caps a listing of one fixed partition (users, configurations, tasks): admin lists stay small. */
const MAX_ITEMS = 10_000;

/**
 * Every item of a fixed partition (`USERS`, `CONFIGURATIONS`, `TASKS`), following
 * LastEvaluatedKey until the partition (or the cap) is exhausted.
 */
export async function queryWholePartition(
  client: DynamoDBDocumentClient,
  tableName: string,
  partition: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const output = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: '#pk = :partition',
        ExpressionAttributeNames: { '#pk': TABLE_LAYOUT.partitionKey },
        ExpressionAttributeValues: { ':partition': partition },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(output.Items ?? []));
    startKey = output.LastEvaluatedKey;
  } while (startKey && items.length < MAX_ITEMS);
  return items;
}

/**
 * One page of a fixed partition, in sort-key order, with an opaque cursor. A cursor is
 * accepted only if it names an item of this partition and kind: one from another list, or
 * forged, is a 400 and never reaches DynamoDB.
 */
export async function queryPartitionPage(
  client: DynamoDBDocumentClient,
  tableName: string,
  kind: { partition: string; sortKeyPrefix: string },
  options: { limit: number; cursor?: string },
): Promise<{ items: Record<string, unknown>[]; cursor?: string }> {
  assertPageLimit(options.limit);
  const { partitionKey, sortKey } = TABLE_LAYOUT;
  const startKey =
    options.cursor === undefined
      ? undefined
      : decodeCursor(
          options.cursor,
          (key) =>
            hasExactAttributes(key, [partitionKey, sortKey]) &&
            key[partitionKey] === kind.partition &&
            key[sortKey]?.startsWith(kind.sortKeyPrefix) === true,
        );
  const output = await client.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: '#pk = :partition',
      ExpressionAttributeNames: { '#pk': partitionKey },
      ExpressionAttributeValues: { ':partition': kind.partition },
      ConsistentRead: true,
      Limit: options.limit,
      ExclusiveStartKey: startKey,
    }),
  );
  const cursor = encodeCursor(output.LastEvaluatedKey);
  return { items: output.Items ?? [], ...(cursor === undefined ? {} : { cursor }) };
}
