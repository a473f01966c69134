import type { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { batchGetItems } from '../../lambdas/adapters/dynamo/batch-get-items.js';
import { CountersignError } from '../../lambdas/core/errors.js';

type Key = Record<string, string>;

/** A table that answers each BatchGetItem with `answer(keys asked)`; records what was asked. */
function tableAnswering(answer: (keys: Key[], call: number) => { found: Key[]; unprocessed: Key[] }) {
  const asked: Key[][] = [];
  const client = {
    send: async (command: BatchGetCommand) => {
      const keys = (command.input.RequestItems?.table?.Keys ?? []) as Key[];
      asked.push(keys);
      const { found, unprocessed } = answer(keys, asked.length);
      return {
        Responses: { table: found.map((key) => ({ ...key, found: true })) },
        ...(unprocessed.length > 0 ? { UnprocessedKeys: { table: { Keys: unprocessed } } } : {}),
      };
    },
  } as unknown as DynamoDBDocumentClient;
  return { client, asked };
}

const keysNumbered = (count: number): Key[] =>
  Array.from({ length: count }, (_, index) => ({ pk: 'PAGES', sk: `PAGE#${index}` }));

describe('batchGetItems', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads 100 keys a call and asks again for the keys DynamoDB left unprocessed', async () => {
    // Prepare: the first call leaves its last key unprocessed.
    const { client, asked } = tableAnswering((keys, call) =>
      call === 1
        ? { found: keys.slice(0, -1), unprocessed: keys.slice(-1) }
        : { found: keys, unprocessed: [] },
    );

    // Act
    const items = await batchGetItems(client, 'table', keysNumbered(150), 'Pages');

    // Assess
    expect(items).toHaveLength(150);
    expect(asked.map((keys) => keys.length)).toEqual([100, 1, 50]);
  });

  it('refuses a silently shortened answer when the table keeps throttling', async () => {
    // Prepare
    vi.useFakeTimers();
    const { client, asked } = tableAnswering((keys) => ({ found: [], unprocessed: keys }));

    // Act
    const reading = batchGetItems(client, 'table', keysNumbered(2), 'Skills').catch(
      (error: unknown) => error,
    );
    await vi.runAllTimersAsync();
    const error = await reading;

    // Assess
    expect(error).toBeInstanceOf(CountersignError);
    expect((error as CountersignError).code).toBe('internal');
    expect((error as CountersignError).message).toBe('Skills could not be read: the table kept throttling.');
    expect(asked).toHaveLength(9);
  });
});
