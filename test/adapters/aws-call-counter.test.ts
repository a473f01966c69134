import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import { ensureTable } from '../../lambdas/adapters/dynamo/create-table.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';

describe('AwsCallCounter', () => {
  let dynamo: RunningDynalite;

  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await dynamo.stop();
  });

  it('counts each command once as Service:Operation, even when attached twice', async () => {
    // Prepare
    const counter = new AwsCallCounter();
    const client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    counter.attachTo(client);
    counter.attachTo(client);

    // Act
    await client.send(new ListTablesCommand({}));
    await client.send(new ListTablesCommand({}));
    await ensureTable(client, dynamo.tableName);

    // Assess
    expect(counter.snapshot()).toEqual({ 'DynamoDB:DescribeTable': 2, 'DynamoDB:ListTables': 2 });
    client.destroy();
  });

  it('records stand-in calls, totals them per service and resets', () => {
    // Prepare
    const counter = new AwsCallCounter();

    // Act
    counter.record('KMS', 'Decrypt');
    counter.record('KMS', 'Decrypt');
    counter.record('SFN', 'SendTaskSuccess');
    const before = counter.snapshot();
    const totals = { all: counter.total(), kms: counter.total('KMS'), sqs: counter.total('SQS') };
    counter.reset();

    // Assess
    expect(before).toEqual({ 'KMS:Decrypt': 2, 'SFN:SendTaskSuccess': 1 });
    expect(totals).toEqual({ all: 3, kms: 2, sqs: 0 });
    expect(counter.snapshot()).toEqual({});
  });
});
