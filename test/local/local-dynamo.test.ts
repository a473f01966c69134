import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { startLocalDynamo } from '../../lambdas/local/local-dynamo.js';

const temporaryDirectories: string[] = [];

afterEach(async () => {
  await Promise.all(temporaryDirectories.splice(0).map((directory) => rm(directory, { recursive: true })));
});

/** Listening TCP servers of this process, as Node counts its active resources. */
function listeningServers(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'TCPServerWrap').length;
}

describe('the local store (dynalite in-process)', () => {
  it('opens no socket: a web page or another local user has nothing to connect to', async () => {
    // Prepare
    const before = listeningServers();

    // Act
    const dynamo = await startLocalDynamo({ tableName: 'countersign-local' });
    const during = listeningServers();
    await dynamo.documentClient.send(
      new PutCommand({ TableName: dynamo.tableName, Item: { pk: 'A', sk: 'B', value: 'kept' } }),
    );
    const read = await dynamo.documentClient.send(
      new GetCommand({ TableName: dynamo.tableName, Key: { pk: 'A', sk: 'B' } }),
    );
    await dynamo.stop();

    // Assess
    expect(during).toBe(before);
    expect(read.Item).toEqual({ pk: 'A', sk: 'B', value: 'kept' });
  });

  it('keeps its data on disk across a stop and a start in the same process', async () => {
    // Prepare
    const directory = await mkdtemp(path.join(tmpdir(), 'countersign-dynalite-'));
    temporaryDirectories.push(directory);
    const first = await startLocalDynamo({ path: directory, tableName: 'countersign-local' });
    await first.documentClient.send(
      new PutCommand({ TableName: first.tableName, Item: { pk: 'RUN#1', sk: 'RUN', status: 'waiting' } }),
    );
    await first.stop();

    // Act
    const second = await startLocalDynamo({ path: directory, tableName: 'countersign-local' });
    const read = await second.documentClient.send(
      new GetCommand({ TableName: second.tableName, Key: { pk: 'RUN#1', sk: 'RUN' } }),
    );
    await second.stop();

    // Assess
    expect(read.Item?.status).toBe('waiting');
  });
});
