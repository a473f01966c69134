import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { CountersignError } from '../../core/errors.js';
import type { ItemKey } from './item-codec.js';

/** BatchGetItem takes at most 100 keys a call. */
const BATCH_GET_MAX_KEYS = 100;
/** Unprocessed keys are DynamoDB shedding load: asked for again, a bounded number of times. */
const UNPROCESSED_RETRIES = 8;
const MAX_BACKOFF_MILLISECONDS = 1_000;

/**
 * The items of `keys` (missing ones are simply absent), strongly consistent: one BatchGetItem
 * per 100 keys, and unprocessed keys asked for again with exponential back-off, as DynamoDB
 * asks. Keys still unprocessed after that are an internal error naming `what` ("Pages"): a caller never
 * gets a silently shortened answer.
 *
 * @example
 * const items = await batchGetItems(client, tableName, [runItemKey(runId), userItemKey(userId)], 'The run and its owner');
 */
export async function batchGetItems(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly ItemKey[],
  what: string,
  /** Only these attributes of each item (a list that needs a label, not a run's sealed state). */
  projection?: readonly string[],
): Promise<Record<string, unknown>[]> {
  const projected = projection && {
    ProjectionExpression: projection.map((_name, position) => `#a${position}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(projection.map((name, position) => [`#a${position}`, name])),
  };
  const items: Record<string, unknown>[] = [];
  for (let start = 0; start < keys.length; start += BATCH_GET_MAX_KEYS) {
    let pending: Record<string, unknown>[] = keys.slice(start, start + BATCH_GET_MAX_KEYS);
    for (let attempt = 0; pending.length > 0; attempt += 1) {
      if (attempt > UNPROCESSED_RETRIES) {
        throw new CountersignError('internal', `${what} could not be read: the table kept throttling.`, {
          expose: false,
        });
      }
      if (attempt > 0) await sleep(Math.min(MAX_BACKOFF_MILLISECONDS, 25 * 2 ** attempt));
      const output: BatchGetCommandOutput = await client.send(
        new BatchGetCommand({
          RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true, ...projected } },
        }),
      );
      items.push(...(output.Responses?.[tableName] ?? []));
      pending = output.UnprocessedKeys?.[tableName]?.Keys ?? [];
    }
  }
  return items;
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
