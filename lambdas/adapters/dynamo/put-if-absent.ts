import { type DynamoDBDocumentClient, PutCommand, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { isConditionalCheckFailed } from './item-codec.js';

/** The condition of a conditional put, as the document client takes it. */
export type PutCondition = Pick<
  PutCommandInput,
  'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'
>;

/**
 * When an existing item may be written over all the same (a claim that was given back, or whose
 * holder never came back): a condition on its attributes, with its own placeholders (`#pk` is taken).
 */
export interface TakeOver {
  readonly condition: string;
  readonly names: Readonly<Record<string, string>>;
  readonly values: Readonly<Record<string, unknown>>;
}

/**
 * Writes `item` unless one with its key exists (a conditional put); false when one did. The
 * first writer of a key wins: a run id, a decision's turn, an approver's approval, a new skill.
 * With `takeOver`, an existing item that meets its condition is written over too (a claim).
 *
 * @example
 * const claimed = await putIfAbsent(client, tableName, { pk: 'RUN#r1', sk: 'DECISION#000003', ... });
 */
export async function putIfAbsent(
  client: DynamoDBDocumentClient,
  tableName: string,
  item: Record<string, unknown>,
  takeOver?: TakeOver,
): Promise<boolean> {
  return putWhen(client, tableName, item, {
    ConditionExpression:
      takeOver === undefined
        ? 'attribute_not_exists(#pk)'
        : `attribute_not_exists(#pk) OR (${takeOver.condition})`,
    ExpressionAttributeNames: { '#pk': TABLE_LAYOUT.partitionKey, ...takeOver?.names },
    ...(takeOver === undefined ? {} : { ExpressionAttributeValues: { ...takeOver.values } }),
  });
}

/**
 * Writes `item` when `condition` holds for the item it replaces (none: always); false when the
 * condition failed. A card put only over no card, another turn's or an open one; a call record
 * only over the attempt that wrote it.
 *
 * @example
 * const written = await putWhen(client, tableName, item, { ConditionExpression: '#state = :open', ... });
 */
export async function putWhen(
  client: DynamoDBDocumentClient,
  tableName: string,
  item: Record<string, unknown>,
  condition: PutCondition = {},
): Promise<boolean> {
  try {
    await client.send(new PutCommand({ TableName: tableName, Item: item, ...condition }));
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}
