import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DeleteCommand, type DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailed } from '../adapters/dynamo/item-codec.js';
import { TABLE_LAYOUT } from '../contract/table-layout.js';

/**
 * Local mode's stand-in for DynamoDB TTL, which dynalite lacks: removes every item whose
 * `removeAfter` (epoch seconds) has passed. Run once when the local runtime starts; dynalite is
 * local and small, so a scan is fine. Returns how many items it removed.
 *
 * @example
 * const removed = await sweepExpiredItems(dynamo.documentClient, dynamo.tableName, new Date());
 */
export async function sweepExpiredItems(
  client: DynamoDBDocumentClient,
  tableName: string,
  now: Date,
): Promise<number> {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const names = { '#removeAfter': TABLE_LAYOUT.timeToLiveAttribute };
  let removed = 0;
  const pages = paginateScan(
    { client },
    {
      TableName: tableName,
      FilterExpression: '#removeAfter <= :now',
      ExpressionAttributeNames: { ...names, '#pk': TABLE_LAYOUT.partitionKey, '#sk': TABLE_LAYOUT.sortKey },
      ExpressionAttributeValues: { ':now': nowSeconds },
      ProjectionExpression: '#pk, #sk',
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      await client
        .send(
          new DeleteCommand({
            TableName: tableName,
            Key: {
              [TABLE_LAYOUT.partitionKey]: item[TABLE_LAYOUT.partitionKey],
              [TABLE_LAYOUT.sortKey]: item[TABLE_LAYOUT.sortKey],
            },
            // Like TTL: an item given a later removal time since the scan stays.
            ConditionExpression: '#removeAfter <= :now',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ':now': nowSeconds },
          }),
        )
        .then(
          () => {
            removed += 1;
          },
          (error: unknown) => {
            if (!isConditionalCheckFailed(error)) throw error;
          },
        );
    }
  }
  return removed;
}

/**
 * Local mode's stand-in for the overflow bucket's lifecycle rule: removes every blob file
 * written (last modified) longer than `maximumAgeSeconds` ago. Returns how many it removed.
 *
 * @example
 * await sweepExpiredBlobs(directory.blobsDirectory, 91 * 86_400, new Date());
 */
export async function sweepExpiredBlobs(
  directory: string,
  maximumAgeSeconds: number,
  now: Date,
): Promise<number> {
  const oldestKept = now.getTime() - maximumAgeSeconds * 1000;
  let entries: string[];
  try {
    entries = await readdir(directory, { recursive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let removed = 0;
  for (const entry of entries) {
    const path = join(directory, entry);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile() || info.mtimeMs > oldestKept) continue;
    await rm(path, { force: true });
    removed += 1;
  }
  return removed;
}
