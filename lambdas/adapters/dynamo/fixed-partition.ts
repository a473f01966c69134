import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from './table-layout.js';

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
