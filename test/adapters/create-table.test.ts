import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable } from '../../lambdas/adapters/dynamo/create-table.js';
import { CountersignError } from '../../lambdas/core/errors.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';

describe('ensureTable', () => {
  let dynamo: RunningDynalite;

  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await dynamo.stop();
  });

  it('creates the table with the inbox index once and leaves it alone afterwards', async () => {
    // Act
    await ensureTable(dynamo.client, dynamo.tableName);
    const { Table: table } = await dynamo.client.send(
      new DescribeTableCommand({ TableName: dynamo.tableName }),
    );

    // Assess
    expect(table?.TableStatus).toBe('ACTIVE');
    expect(table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    const inbox = table?.GlobalSecondaryIndexes?.find((index) => index.IndexName === 'inbox');
    expect(inbox?.KeySchema).toEqual([
      { AttributeName: 'inboxPk', KeyType: 'HASH' },
      { AttributeName: 'inboxSk', KeyType: 'RANGE' },
    ]);
    expect(inbox?.Projection?.ProjectionType).toBe('ALL');
  });

  it('refuses a table of that name that lacks the inbox index', async () => {
    // Prepare
    await dynamo.client.send(
      new CreateTableCommand({
        TableName: 'someone-elses',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      }),
    );

    // Act
    const error = await ensureTable(dynamo.client, 'someone-elses').catch((thrown: unknown) => thrown);

    // Assess
    expect(error).toBeInstanceOf(CountersignError);
    expect((error as CountersignError).code).toBe('configuration');
  });
});
