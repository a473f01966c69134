import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoApproverResponseStore } from '../../lambdas/adapters/dynamo/approver-response-store.js';
import { InMemoryApproverResponseStore } from '../../lambdas/adapters/memory/in-memory-approver-response-store.js';
import {
  APPROVER_RESPONSE_SCHEMA_VERSION,
  type ApproverResponse,
  type ApproverResponseStore,
} from '../../lambdas/core/analytics/approver-response.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';

function response(respondedAt: string, sequence: number): ApproverResponse {
  return {
    schemaVersion: APPROVER_RESPONSE_SCHEMA_VERSION,
    runId: `run-${sequence}`,
    turn: 1,
    sequence,
    approver: 'ana',
    groups: ['marketing'],
    outcome: 'approve',
    cardShownAt: '2026-01-01T00:00:00.000Z',
    respondedAt,
    responseMilliseconds: 1_000,
  };
}

/** Every response of a range, through as many pages as it takes. */
async function listAll(store: ApproverResponseStore, from: string, to: string, limit: number) {
  const runs: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.listResponses({
      from: new Date(from),
      to: new Date(to),
      limit,
      ...(cursor === undefined ? {} : { cursor }),
    });
    runs.push(...page.items.map((item) => item.runId));
    cursor = page.cursor;
    pages += 1;
  } while (cursor !== undefined && pages < 20);
  return runs;
}

describe.each([
  ['DynamoDB (dynalite)', 'dynamo'],
  ['in memory', 'memory'],
] as const)('approver response store: %s', (_name, kind) => {
  let dynamo: RunningDynalite | undefined;
  let store: ApproverResponseStore;

  beforeAll(async () => {
    if (kind === 'dynamo') {
      dynamo = await startDynalite();
      store = new DynamoApproverResponseStore({ client: dynamo.documentClient, tableName: dynamo.tableName });
    } else {
      store = new InMemoryApproverResponseStore();
    }
    // Three months, recorded out of order, one of them twice.
    for (const [at, sequence] of [
      ['2026-03-02T08:00:00.000Z', 4],
      ['2026-01-15T08:00:00.000Z', 1],
      ['2026-02-01T00:00:00.000Z', 2],
      ['2026-02-28T23:59:59.000Z', 3],
      ['2026-02-28T23:59:59.000Z', 3],
      ['2026-04-01T00:00:00.000Z', 5],
    ] as const) {
      await store.recordResponse(response(at, sequence));
    }
  });

  afterAll(async () => {
    await dynamo?.stop();
  });

  it('lists the responses of a range across months, oldest first, each once', async () => {
    // Act
    const all = await listAll(store, '2026-01-01T00:00:00.000Z', '2026-03-31T00:00:00.000Z', 100);

    // Assess
    expect(all).toEqual(['run-1', 'run-2', 'run-3', 'run-4']);
  });

  it('pages through a range with a cursor, a page at a time, missing nothing', async () => {
    // Act
    const paged = await listAll(store, '2026-01-20T00:00:00.000Z', '2026-04-30T00:00:00.000Z', 2);

    // Assess
    expect(paged).toEqual(['run-2', 'run-3', 'run-4', 'run-5']);
  });

  it('refuses a forged cursor as the client’s mistake, naming it', async () => {
    // Act
    const listing = store.listResponses({
      from: new Date('2026-01-01T00:00:00.000Z'),
      to: new Date('2026-02-01T00:00:00.000Z'),
      limit: 1,
      cursor: Buffer.from(JSON.stringify({ pk: 'RUN#x', sk: 'CARD' })).toString('base64url'),
    });

    // Assess
    await expect(listing).rejects.toMatchObject({ code: 'bad-request', field: 'cursor' });
  });
});
