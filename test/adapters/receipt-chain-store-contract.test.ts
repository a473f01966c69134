import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoReceiptChainStore } from '../../lambdas/adapters/dynamo/receipt-chain-store.js';
import { InMemoryReceiptChainStore } from '../../lambdas/adapters/memory/in-memory-receipt-chain-store.js';
import { appendChainEntry } from '../../lambdas/core/receipts/append-chain-entry.js';
import type { ChainEntry } from '../../lambdas/core/receipts/chain-entry.js';
import { draftExpiryEntry } from '../../lambdas/core/receipts/draft-chain-entries.js';
import type { ReceiptChainStore } from '../../lambdas/core/receipts/receipt-ports.js';
import { verifyReceipt } from '../../lambdas/core/receipts/verify-receipt.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';
import {
  createTestSigner,
  readSampleReceipt,
  recordSampleChain,
  steppingClock,
} from '../support/receipt-chains.js';

/** One contract for both chain stores: what the appender and the receipt route rely on. */
describe.each([
  ['DynamoDB (dynalite)', 'dynamo'],
  ['in memory', 'memory'],
] as const)('receipt chain store: %s', (_name, kind) => {
  let dynamo: RunningDynalite | undefined;
  let chain: ReceiptChainStore;
  let signer: Awaited<ReturnType<typeof createTestSigner>>;

  beforeAll(async () => {
    signer = await createTestSigner();
    if (kind === 'memory') {
      chain = new InMemoryReceiptChainStore();
      return;
    }
    dynamo = await startDynalite();
    chain = new DynamoReceiptChainStore({
      client: dynamo.documentClient,
      tableName: dynamo.tableName,
      removeAfter: () => 1_900_000_000,
    });
  });

  afterAll(async () => {
    await dynamo?.stop();
  });

  it('stores entries as written and serves them in sequence order, a verifiable receipt', async () => {
    // Prepare
    const dependencies = { chain, signer: signer.signer, clock: steppingClock() };

    // Act
    await recordSampleChain(dependencies, 'run-1', 'cancel');
    const receipt = await readSampleReceipt(chain as InMemoryReceiptChainStore, 'run-1');

    // Assess
    expect(receipt.entries.map((entry) => (entry as ChainEntry).sequence)).toEqual([0, 1, 2, 3]);
    expect(verifyReceipt(receipt, signer)).toMatchObject({ kind: 'verified', unsignedTail: 1 });
    expect(await chain.readEntries('run-2')).toEqual([]);
  });

  it('refuses a second entry at a taken sequence, whoever writes it', async () => {
    // Prepare
    const clock = steppingClock();
    const { entry } = await appendChainEntry(
      { chain, clock },
      draftExpiryEntry({ runId: 'run-3', turn: 1, expiredAt: clock.now().toISOString() }),
    );

    // Act
    const again = await chain.appendEntry({ ...entry, recordedAt: '2026-03-02T00:00:00.000Z' } as ChainEntry);

    // Assess
    expect(again).toEqual({ kind: 'sequence-taken' });
    expect(await chain.readEntries('run-3')).toEqual([entry]);
  });
});

/** The DynamoDB store's own layout, which no in-memory store has: the run's partition and the retention stamp. */
describe('receipt chain store on DynamoDB: its items', () => {
  let dynamo: RunningDynalite;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await dynamo.stop();
  });

  it('keeps entries in the run partition, each under its sequence, with the retention stamp', async () => {
    // Prepare
    const chain = new DynamoReceiptChainStore({
      client: dynamo.documentClient,
      tableName: dynamo.tableName,
      removeAfter: () => 1_900_000_000,
    });
    const { signer } = await createTestSigner();
    await recordSampleChain({ chain, signer, clock: steppingClock() }, 'run-1', 'cancel');

    // Act
    const { Items: items } = await dynamo.documentClient.send(
      new QueryCommand({
        TableName: dynamo.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'RUN#run-1' },
      }),
    );

    // Assess
    expect(items?.map((item) => [item.sk, item.removeAfter])).toEqual([
      ['CHAIN#00000000', 1_900_000_000],
      ['CHAIN#00000001', 1_900_000_000],
      ['CHAIN#00000002', 1_900_000_000],
      ['CHAIN#00000003', 1_900_000_000],
    ]);
  });
});
