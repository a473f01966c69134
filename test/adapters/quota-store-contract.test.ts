import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import { DynamoQuotaStore } from '../../lambdas/adapters/dynamo/dynamo-quota-store.js';
import { InMemoryQuotaStore } from '../../lambdas/adapters/memory/in-memory-quota-store.js';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import type { QuotaStore } from '../../lambdas/core/quotas/quota-store.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';

interface QuotaStoreUnderContract {
  readonly quotas: QuotaStore;
  close(): Promise<void>;
}

const NOW = 1_772_366_400; // 2026-03-01T12:00:00Z, in epoch seconds
let unique = 0;
/** A principal of its own per test, so the cases share a store without sharing counts. */
function principal(): string {
  unique += 1;
  return `user-${unique}`;
}

const window = (principalId: string, limit: number, counter = 'runs-started', windowStartSeconds = NOW) => ({
  principalId,
  counter,
  windowStartSeconds,
  windowSeconds: 60,
  limit,
});

const lease = (principalId: string, leaseId: string, limit: number, nowSeconds = NOW) => ({
  principalId,
  leaseId,
  limit,
  nowSeconds,
  endsAtSeconds: nowSeconds + 120,
});

describe.each([
  [
    'DynamoDB (dynalite)',
    async (): Promise<QuotaStoreUnderContract> => {
      const dynamo = await startDynalite();
      return { quotas: new DynamoQuotaStore(dynamo), close: () => dynamo.stop() };
    },
  ],
  [
    'in memory',
    async (): Promise<QuotaStoreUnderContract> => ({
      quotas: new InMemoryQuotaStore(),
      close: async () => {},
    }),
  ],
])('the QuotaStore contract: %s', (_name, start) => {
  let store: QuotaStoreUnderContract;

  beforeAll(async () => {
    store = await start();
  });

  afterAll(async () => {
    await store.close();
  });

  it('counts up to the limit in a window, then refuses; other windows, counters and principals are apart', async () => {
    // Prepare
    const ana = principal();
    const bob = principal();

    // Act
    const outcomes = [];
    for (let count = 0; count < 4; count += 1)
      outcomes.push((await store.quotas.countInWindow(window(ana, 3))).kind);
    const nextWindow = await store.quotas.countInWindow(window(ana, 3, 'runs-started', NOW + 60));
    const otherCounter = await store.quotas.countInWindow(window(ana, 3, 'completions'));
    const otherPrincipal = await store.quotas.countInWindow(window(bob, 3));

    // Assess
    expect(outcomes).toEqual(['counted', 'counted', 'counted', 'over-limit']);
    expect([nextWindow.kind, otherCounter.kind, otherPrincipal.kind]).toEqual([
      'counted',
      'counted',
      'counted',
    ]);
  });

  it('lets exactly the limit through a burst of concurrent counts', async () => {
    // Prepare
    const ana = principal();

    // Act
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, () => store.quotas.countInWindow(window(ana, 5))),
    );

    // Assess
    expect(outcomes.filter((outcome) => outcome.kind === 'counted')).toHaveLength(5);
  });

  it('holds at most the limit of leases, says when the first frees, and frees a slot on release', async () => {
    // Prepare
    const ana = principal();
    const first = await store.quotas.takeLease(lease(ana, 'stream-1', 2, NOW));
    await store.quotas.takeLease(lease(ana, 'stream-2', 2, NOW + 5));

    // Act
    const third = await store.quotas.takeLease(lease(ana, 'stream-3', 2, NOW + 10));
    if (first.kind === 'taken') await store.quotas.releaseLease(first.lease);
    const afterRelease = await store.quotas.takeLease(lease(ana, 'stream-4', 2, NOW + 11));

    // Assess
    expect(first.kind).toBe('taken');
    expect(third).toEqual({ kind: 'over-limit', freeAtSeconds: NOW + 120 });
    expect(afterRelease.kind).toBe('taken');
  });

  it('frees a slot whose lease ended (a stream that crashed), and a stale release frees nothing', async () => {
    // Prepare: two streams; the first never gives its slot back.
    const ana = principal();
    const crashed = await store.quotas.takeLease(lease(ana, 'crashed', 2, NOW));
    await store.quotas.takeLease(lease(ana, 'alive', 2, NOW + 60));

    // Act
    const beforeEnd = await store.quotas.takeLease(lease(ana, 'early', 2, NOW + 119));
    const afterEnd = await store.quotas.takeLease(lease(ana, 'healed', 2, NOW + 120));
    if (crashed.kind === 'taken') await store.quotas.releaseLease(crashed.lease);
    const whileHealedHolds = await store.quotas.takeLease(lease(ana, 'another', 2, NOW + 121));

    // Assess
    expect(beforeEnd.kind).toBe('over-limit');
    expect(afterEnd.kind).toBe('taken');
    expect(whileHealedHolds.kind).toBe('over-limit');
  });

  it('gives a burst of concurrent streams exactly the limit of slots', async () => {
    // Prepare
    const ana = principal();

    // Act
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_unused, index) => store.quotas.takeLease(lease(ana, `burst-${index}`, 2))),
    );

    // Assess
    expect(outcomes.filter((outcome) => outcome.kind === 'taken')).toHaveLength(2);
  });

  it('remembers the runs a principal started, apart per principal, until they are forgotten', async () => {
    // Prepare
    const ana = principal();
    const bob = principal();
    await store.quotas.recordStartedRun(ana, { runId: 'run-a', configurationId: 'writer' }, NOW + 3600);
    await store.quotas.recordStartedRun(ana, { runId: 'run-b', configurationId: 'support' }, NOW + 3600);
    await store.quotas.recordStartedRun(bob, { runId: 'run-c', configurationId: 'writer' }, NOW + 3600);

    // Act
    await store.quotas.forgetStartedRuns(ana, ['run-a']);
    const anas = await store.quotas.listStartedRuns(ana);
    const bobs = await store.quotas.listStartedRuns(bob);

    // Assess
    expect(anas).toEqual([{ runId: 'run-b', configurationId: 'support' }]);
    expect(bobs).toEqual([{ runId: 'run-c', configurationId: 'writer' }]);
  });
});

describe('DynamoQuotaStore on DynamoDB', () => {
  let dynamo: RunningDynalite;
  let quotas: DynamoQuotaStore;
  const counter = new AwsCallCounter();

  beforeAll(async () => {
    dynamo = await startDynalite();
    counter.attachTo(dynamo.client);
    quotas = new DynamoQuotaStore(dynamo);
  });

  afterAll(async () => {
    await dynamo.stop();
  });

  it('counts with one conditional UpdateItem and takes a lease with one Query and one PutItem', async () => {
    // Prepare
    const ana = principal();
    counter.reset();

    // Act
    await quotas.countInWindow(window(ana, 5));
    const counted = counter.snapshot();
    counter.reset();
    await quotas.takeLease(lease(ana, 'stream-1', 3));
    const leased = counter.snapshot();

    // Assess
    expect(counted).toEqual({ 'DynamoDB:UpdateItem': 1 });
    expect(leased).toEqual({ 'DynamoDB:Query': 1, 'DynamoDB:PutItem': 1 });
  });

  it('keeps every item in the principal partition with a TTL, so nothing outlives its use', async () => {
    // Prepare
    const ana = principal();

    // Act
    await quotas.countInWindow(window(ana, 5));
    await quotas.takeLease(lease(ana, 'stream-1', 3));
    const windowItem = await dynamo.documentClient.send(
      new GetCommand({
        TableName: dynamo.tableName,
        Key: { pk: `QUOTA#${ana}`, sk: `WINDOW#runs-started#${NOW}` },
      }),
    );
    const leaseItem = await dynamo.documentClient.send(
      new GetCommand({ TableName: dynamo.tableName, Key: { pk: `QUOTA#${ana}`, sk: 'STREAM#0000' } }),
    );

    // Assess
    expect(windowItem.Item).toMatchObject({ count: 1, [TABLE_LAYOUT.timeToLiveAttribute]: NOW + 60 + 3600 });
    expect(leaseItem.Item).toMatchObject({
      leaseId: 'stream-1',
      [TABLE_LAYOUT.timeToLiveAttribute]: NOW + 120 + 3600,
    });
  });
});
