import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import { type EmbeddedRuntime, startEmbeddedRuntime } from '../../lambdas/local/embedded-runtime.js';
import { sweepExpiredBlobs, sweepExpiredItems } from '../../lambdas/local/retention-sweep.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';
import { removeTestData, stateMachineDefinition } from '../support/local-runtime.js';

const NOW = new Date('2026-06-01T00:00:00.000Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const DAY_SECONDS = 86_400;

function item(partition: string, removeAfter?: number): Record<string, unknown> {
  return {
    [TABLE_LAYOUT.partitionKey]: partition,
    [TABLE_LAYOUT.sortKey]: 'RUN',
    ...(removeAfter === undefined ? {} : { [TABLE_LAYOUT.timeToLiveAttribute]: removeAfter }),
  };
}

describe('the local retention sweep', () => {
  let dynamo: RunningDynalite;
  let blobs: string;

  beforeAll(async () => {
    dynamo = await startDynalite();
    blobs = await mkdtemp(join(tmpdir(), 'countersign-sweep-'));
  });

  afterAll(async () => {
    await dynamo.stop();
    await rm(blobs, { recursive: true, force: true });
  });

  async function exists(partition: string): Promise<boolean> {
    const { Item } = await dynamo.documentClient.send(
      new GetCommand({
        TableName: dynamo.tableName,
        Key: { [TABLE_LAYOUT.partitionKey]: partition, [TABLE_LAYOUT.sortKey]: 'RUN' },
      }),
    );
    return Item !== undefined;
  }

  it('removes the items whose removal time has passed and keeps every other', async () => {
    // Prepare
    const items = [
      item('RUN#expired', NOW_SECONDS - DAY_SECONDS),
      item('RUN#due-now', NOW_SECONDS),
      item('RUN#later', NOW_SECONDS + DAY_SECONDS),
      item('RUN#forever'),
    ];
    for (const entry of items) {
      await dynamo.documentClient.send(new PutCommand({ TableName: dynamo.tableName, Item: entry }));
    }

    // Act
    const removed = await sweepExpiredItems(dynamo.documentClient, dynamo.tableName, NOW);

    // Assess
    expect(removed).toBe(2);
    expect(await exists('RUN#expired')).toBe(false);
    expect(await exists('RUN#due-now')).toBe(false);
    expect(await exists('RUN#later')).toBe(true);
    expect(await exists('RUN#forever')).toBe(true);
  });

  it('removes blob files older than the overflow expiration, like the lifecycle rule', async () => {
    // Prepare
    const directory = join(blobs, 'runs', 'r1', 'state');
    await mkdir(directory, { recursive: true });
    await writeFile(join(directory, 'old'), 'x');
    await writeFile(join(directory, 'recent'), 'y');
    const oldTime = new Date(NOW.getTime() - 31 * DAY_SECONDS * 1000);
    const recentTime = new Date(NOW.getTime() - 29 * DAY_SECONDS * 1000);
    await utimes(join(directory, 'old'), oldTime, oldTime);
    await utimes(join(directory, 'recent'), recentTime, recentTime);

    // Act
    const removed = await sweepExpiredBlobs(blobs, 30 * DAY_SECONDS, NOW);

    // Assess
    expect(removed).toBe(1);
    expect(await readdir(directory)).toEqual(['recent']);
    expect(await sweepExpiredBlobs(join(blobs, 'missing'), 30 * DAY_SECONDS, NOW)).toBe(0);
  });
});

describe('local mode on start', () => {
  let runtime: EmbeddedRuntime | undefined;
  let baseDirectory = '';

  afterAll(async () => {
    await runtime?.stop();
    await removeTestData({ baseDirectory });
  });

  const start = () =>
    startEmbeddedRuntime({
      definition: stateMachineDefinition(),
      baseDirectory,
      port: 0,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      writeLogLine: () => undefined,
    });

  it('sweeps what DynamoDB TTL would have removed while it was stopped (dynalite has no TTL)', async () => {
    // Prepare: an ended run past its retention and one within it, written while running
    baseDirectory = await mkdtemp(join(tmpdir(), 'countersign-sweep-start-'));
    runtime = await start();
    const now = Math.floor(Date.now() / 1000);
    for (const entry of [item('RUN#swept', now - DAY_SECONDS), item('RUN#kept', now + 30 * DAY_SECONDS)]) {
      await runtime.dynamo.documentClient.send(
        new PutCommand({ TableName: runtime.dynamo.tableName, Item: entry }),
      );
    }
    await runtime.stop();

    // Act
    runtime = await start();
    const read = async (partition: string) =>
      (
        await (runtime as EmbeddedRuntime).dynamo.documentClient.send(
          new GetCommand({
            TableName: (runtime as EmbeddedRuntime).dynamo.tableName,
            Key: { [TABLE_LAYOUT.partitionKey]: partition, [TABLE_LAYOUT.sortKey]: 'RUN' },
          }),
        )
      ).Item;

    // Assess
    expect(await read('RUN#swept')).toBeUndefined();
    expect(await read('RUN#kept')).toBeDefined();
  });
});
