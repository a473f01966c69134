import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { CountersignError } from '../../core/errors.js';

/**
 * Creates the countersign table with the key layout of `TABLE_LAYOUT` if it does not exist,
 * and waits until it and its inbox index are ACTIVE. For local mode and tests; deployed, the
 * CDK construct owns the table.
 *
 * @example
 * await ensureTable(new DynamoDBClient({ endpoint }), 'countersign');
 */
export async function ensureTable(
  client: DynamoDBClient,
  tableName: string,
  options: { timeoutMs?: number } = {},
): Promise<void> {
  const existing = await describeTable(client, tableName);
  for (const index of [TABLE_LAYOUT.inboxIndex, TABLE_LAYOUT.historyIndex]) {
    if (existing && !existing.GlobalSecondaryIndexes?.some((present) => present.IndexName === index.name)) {
      // dynalite cannot add an index to a table (UpdateTable); DynamoDB can, and the construct does.
      throw new CountersignError(
        'configuration',
        `The table ${tableName} exists without the ${index.name} index (it was created by an older countersign); move its data folder away to start afresh, or use another table name.`,
      );
    }
  }
  if (!existing) {
    try {
      await client.send(
        new CreateTableCommand({
          TableName: tableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [
            { AttributeName: TABLE_LAYOUT.partitionKey, AttributeType: 'S' },
            { AttributeName: TABLE_LAYOUT.sortKey, AttributeType: 'S' },
            { AttributeName: TABLE_LAYOUT.inboxIndex.partitionKey, AttributeType: 'S' },
            { AttributeName: TABLE_LAYOUT.inboxIndex.sortKey, AttributeType: 'S' },
            { AttributeName: TABLE_LAYOUT.historyIndex.partitionKey, AttributeType: 'S' },
            { AttributeName: TABLE_LAYOUT.historyIndex.sortKey, AttributeType: 'S' },
          ],
          KeySchema: [
            { AttributeName: TABLE_LAYOUT.partitionKey, KeyType: 'HASH' },
            { AttributeName: TABLE_LAYOUT.sortKey, KeyType: 'RANGE' },
          ],
          GlobalSecondaryIndexes: [
            {
              IndexName: TABLE_LAYOUT.inboxIndex.name,
              KeySchema: [
                { AttributeName: TABLE_LAYOUT.inboxIndex.partitionKey, KeyType: 'HASH' },
                { AttributeName: TABLE_LAYOUT.inboxIndex.sortKey, KeyType: 'RANGE' },
              ],
              Projection: { ProjectionType: 'ALL' },
            },
            {
              IndexName: TABLE_LAYOUT.historyIndex.name,
              KeySchema: [
                { AttributeName: TABLE_LAYOUT.historyIndex.partitionKey, KeyType: 'HASH' },
                { AttributeName: TABLE_LAYOUT.historyIndex.sortKey, KeyType: 'RANGE' },
              ],
              Projection: {
                ProjectionType: 'INCLUDE',
                NonKeyAttributes: [...TABLE_LAYOUT.historyIndex.projectedAttributes],
              },
            },
          ],
        }),
      );
    } catch (error) {
      // Another process created it first: wait for it like for our own.
      if (!(error instanceof ResourceInUseException)) throw error;
    }
  }
  await waitUntilActive(client, tableName, options.timeoutMs ?? 60_000);
}

async function describeTable(
  client: DynamoDBClient,
  tableName: string,
): Promise<TableDescription | undefined> {
  try {
    const output = await client.send(new DescribeTableCommand({ TableName: tableName }));
    return output.Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

async function waitUntilActive(client: DynamoDBClient, tableName: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const table = await describeTable(client, tableName);
    const indexesActive = (table?.GlobalSecondaryIndexes ?? []).every(
      (index) => index.IndexStatus === undefined || index.IndexStatus === 'ACTIVE',
    );
    if (table?.TableStatus === 'ACTIVE' && indexesActive) return;
    if (Date.now() > deadline) {
      throw new CountersignError(
        'configuration',
        `The table ${tableName} did not become ACTIVE within ${timeoutMs} ms.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
