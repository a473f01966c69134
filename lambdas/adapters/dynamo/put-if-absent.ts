import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { isConditionalCheckFailed } from './item-codec.js';

/**
 * Writes `item` unless one with its key exists (a conditional put); false when one did. The
 * first writer of a key wins: a run id, a decision's turn, an approver's approval, a new skill.
 *
 * @example
 * const claimed = await putIfAbsent(client, tableName, { pk: 'RUN#r1', sk: 'DECISION#000003', ... });
 */
export async function putIfAbsent(
  client: DynamoDBDocumentClient,
  tableName: string,
  item: Record<string, unknown>,
): Promise<boolean> {
  try {
    await client.send(
      new PutCommand({
        TableName: tableName,
        Item: item,
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': TABLE_LAYOUT.partitionKey },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}
