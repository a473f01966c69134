import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import { DynamoExternalRunStore } from '../../lambdas/adapters/dynamo/dynamo-external-run-store.js';
import { InMemoryExternalRunStore } from '../../lambdas/adapters/memory/in-memory-external-run-store.js';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import type {
  ClientKeyClaim,
  ExecutionReport,
  ExternalRunStore,
} from '../../lambdas/core/external-runs/external-run-store.js';
import { startDynalite } from '../support/dynalite.js';

interface StoreUnderContract {
  readonly store: ExternalRunStore;
  close(): Promise<void>;
}

const RETENTION_SECONDS = 8 * 86_400;
const NOW = new Date('2026-03-02T10:00:00.000Z');
let unique = 0;
const next = (prefix: string) => {
  unique += 1;
  return `${prefix}-${unique}`;
};

const claimOf = (fields: Partial<ClientKeyClaim> = {}): ClientKeyClaim => ({
  schemaVersion: 1,
  owner: 'billing-agent',
  clientKey: next('key'),
  runId: next('run'),
  requestDigest: 'sha256:aa',
  claimedAt: NOW.toISOString(),
  ...fields,
});

const reportOf = (fields: Partial<ExecutionReport> = {}): ExecutionReport => ({
  schemaVersion: 1,
  runId: 'run-reports',
  index: 0,
  outcome: 'succeeded',
  approved: true,
  reportedBy: 'billing-agent',
  reportedAt: NOW.toISOString(),
  ...fields,
});

describe.each([
  [
    'DynamoDB (dynalite)',
    async (): Promise<StoreUnderContract> => {
      const dynamo = await startDynalite();
      return {
        store: new DynamoExternalRunStore({ client: dynamo.documentClient, tableName: dynamo.tableName }),
        close: () => dynamo.stop(),
      };
    },
  ],
  [
    'in memory',
    async (): Promise<StoreUnderContract> => ({
      store: new InMemoryExternalRunStore(),
      close: async () => {},
    }),
  ],
])('the ExternalRunStore contract: %s', (_name, start) => {
  let subject: StoreUnderContract;

  beforeAll(async () => {
    subject = await start();
  });

  afterAll(async () => {
    await subject.close();
  });

  it('lets the first claim of a client key win, and reads the winner back to every later one', async () => {
    // Prepare
    const first = claimOf();
    const second = claimOf({ clientKey: first.clientKey, runId: 'run-late', requestDigest: 'sha256:bb' });

    // Act
    const claims = await Promise.all([
      subject.store.claimClientKey(first),
      subject.store.claimClientKey(second),
    ]);

    // Assess
    const winner = claims.find((claim) => claim.kind === 'claimed') ? first : second;
    expect(claims.map((claim) => claim.kind).sort()).toEqual(['claimed', 'exists']);
    expect(claims.find((claim) => claim.kind === 'exists')).toEqual({ kind: 'exists', existing: winner });
    expect(await subject.store.getClientKey(first.owner, first.clientKey)).toEqual(winner);
  });

  it('keeps one client’s keys apart from another’s', async () => {
    // Prepare
    const mine = claimOf();

    // Act
    const theirs = await subject.store.claimClientKey({ ...mine, owner: 'other-agent', runId: 'run-theirs' });

    // Assess
    expect(theirs.kind).toBe('claimed');
    expect(await subject.store.getClientKey('other-agent', mine.clientKey)).toMatchObject({
      runId: 'run-theirs',
    });
    expect(await subject.store.getClientKey(mine.owner, mine.clientKey)).toBeUndefined();
  });

  it('keeps the first report of a call, and lists a run’s reports in call order', async () => {
    // Prepare
    const runId = next('run');

    // Act
    const second = await subject.store.recordExecution(reportOf({ runId, index: 2, outcome: 'failed' }));
    const first = await subject.store.recordExecution(reportOf({ runId, index: 0, detail: 'INV-7' }));
    const again = await subject.store.recordExecution(reportOf({ runId, index: 0, outcome: 'skipped' }));
    const listed = await subject.store.listExecutions(runId);

    // Assess
    expect([second.kind, first.kind]).toEqual(['recorded', 'recorded']);
    expect(again).toEqual({ kind: 'exists', existing: reportOf({ runId, index: 0, detail: 'INV-7' }) });
    expect(listed.map((report) => [report.index, report.outcome])).toEqual([
      [0, 'succeeded'],
      [2, 'failed'],
    ]);
    expect(await subject.store.listExecutions(next('run'))).toEqual([]);
  });
});

describe('DynamoExternalRunStore', () => {
  let dynamo: Awaited<ReturnType<typeof startDynalite>>;
  let store: DynamoExternalRunStore;
  const calls = new AwsCallCounter();
  const rawClientKey = async (owner: string, clientKey: string) =>
    (
      await dynamo.documentClient.send(
        new GetCommand({
          TableName: dynamo.tableName,
          Key: { [TABLE_LAYOUT.partitionKey]: `CLIENT#${owner}`, [TABLE_LAYOUT.sortKey]: `KEY#${clientKey}` },
        }),
      )
    ).Item;

  beforeAll(async () => {
    dynamo = await startDynalite();
    calls.attachTo(dynamo.client);
    store = new DynamoExternalRunStore({
      client: dynamo.documentClient,
      tableName: dynamo.tableName,
      retentionSeconds: RETENTION_SECONDS,
      clock: { now: () => NOW },
    });
  });

  afterAll(async () => {
    await dynamo.stop();
  });

  it('costs one conditional put a claim, one read a lookup, one Query a listing; stamps its removal', async () => {
    // Prepare
    const claim = claimOf();
    calls.reset();

    // Act
    await store.claimClientKey(claim);
    const afterClaim = calls.snapshot();
    await store.claimClientKey(claim);
    const afterRepeat = calls.snapshot();
    await store.listExecutions('run-any');
    const afterList = calls.snapshot();

    // Assess
    expect(afterClaim).toEqual({ 'DynamoDB:PutItem': 1 });
    expect(afterRepeat).toEqual({ 'DynamoDB:PutItem': 2, 'DynamoDB:GetItem': 1 });
    expect(afterList).toEqual({ 'DynamoDB:PutItem': 2, 'DynamoDB:GetItem': 1, 'DynamoDB:Query': 1 });
    expect((await rawClientKey(claim.owner, claim.clientKey))?.[TABLE_LAYOUT.timeToLiveAttribute]).toBe(
      Math.floor(NOW.getTime() / 1000) + RETENTION_SECONDS,
    );
  });
});
