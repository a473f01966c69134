import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import { DynamoPageStore } from '../../lambdas/adapters/dynamo/page-store.js';
import { PAGE_APPLIED_KEYS_KEPT, type PageStore, pageSchema } from '../../lambdas/core/pages.js';
import { startDynalite } from '../support/dynalite.js';
import { InMemoryPageStore } from '../support/in-memory-page-store.js';

/** A page store under contract, and how many backend writes a call made (where it can tell). */
interface PageStoreUnderContract {
  readonly pages: PageStore;
  /** DynamoDB UpdateItem calls so far; undefined for a store that has no backend to count. */
  updates(): number | undefined;
  close(): Promise<void>;
}

async function startDynamoPageStore(): Promise<PageStoreUnderContract> {
  const dynamo = await startDynalite();
  const counter = new AwsCallCounter();
  counter.attachTo(dynamo.client);
  return {
    pages: new DynamoPageStore({ client: dynamo.documentClient, tableName: dynamo.tableName }),
    updates: () => counter.snapshot()['DynamoDB:UpdateItem'] ?? 0,
    close: () => dynamo.stop(),
  };
}

async function startInMemoryPageStore(): Promise<PageStoreUnderContract> {
  return { pages: new InMemoryPageStore(), updates: () => undefined, close: async () => {} };
}

describe.each([
  { name: 'DynamoPageStore on dynalite', start: startDynamoPageStore },
  { name: 'InMemoryPageStore', start: startInMemoryPageStore },
])('page store contract (conditional writes): $name', ({ start }) => {
  let store: PageStoreUnderContract;
  let pageCount = 0;

  beforeAll(async () => {
    store = await start();
  });

  afterAll(async () => {
    await store.close();
  });

  /** A fresh page for one case (no case sees another's keys). */
  async function freshPage(fields: Record<string, string> = {}): Promise<string> {
    pageCount += 1;
    const pageId = `contract-${pageCount}`;
    await store.pages.putPage(pageSchema.parse({ pageId, language: 'en', keywords: 'coats', ...fields }));
    return pageId;
  }

  it('applies a write once per idempotency key; a repeat is answered, not applied', async () => {
    // Prepare
    const pageId = await freshPage();
    const write = { patch: { title: 'Spring' }, updatedBy: 'alice', idempotencyKey: 'run-1/1/0' };

    // Act
    const first = await store.pages.applyMetadata(pageId, write);
    await store.pages.updateMetadata(pageId, { title: 'Edited by hand' }, 'bob');
    const repeat = await store.pages.applyMetadata(pageId, write);

    // Assess
    expect(first).toMatchObject({ kind: 'written', page: { title: 'Spring', updatedBy: 'alice' } });
    expect(repeat).toMatchObject({ kind: 'already-applied', page: { title: 'Edited by hand' } });
    expect((await store.pages.getPage(pageId))?.title).toBe('Edited by hand');
  });

  it('writes only while every expected field holds its value, in the same write', async () => {
    // Prepare
    const pageId = await freshPage({ keywords: 'coats, winter' });

    // Act
    const stale = await store.pages.applyMetadata(pageId, {
      patch: { keywords: 'coats, sale' },
      updatedBy: 'alice',
      idempotencyKey: 'run-2/1/0',
      expect: { language: 'en', keywords: 'coats' },
    });
    const current = await store.pages.applyMetadata(pageId, {
      patch: { keywords: 'coats, winter, sale' },
      updatedBy: 'alice',
      idempotencyKey: 'run-2/2/0',
      expect: { language: 'en', keywords: 'coats, winter' },
    });

    // Assess
    expect(stale).toEqual({ kind: 'record-changed' });
    expect(current).toMatchObject({ kind: 'written', page: { keywords: 'coats, winter, sale' } });
  });

  it('matches an expected empty value to a field the page never had', async () => {
    // Prepare: a page stored without a description attribute.
    const pageId = await freshPage();

    // Act
    const written = await store.pages.applyMetadata(pageId, {
      patch: { description: 'New' },
      updatedBy: 'alice',
      idempotencyKey: 'run-3/1/0',
      expect: { description: '' },
    });

    // Assess
    expect(written.kind).toBe('written');
  });

  it("answers a repeat after the call's own write as applied, even though the expected fields moved", async () => {
    // Prepare: the first attempt appended; its retry still expects the keywords as approved.
    const pageId = await freshPage();
    const write = {
      patch: { keywords: 'coats, sale' },
      updatedBy: 'alice',
      idempotencyKey: 'run-4/1/0',
      expect: { keywords: 'coats' },
    };
    await store.pages.applyMetadata(pageId, write);

    // Act
    const repeat = await store.pages.applyMetadata(pageId, write);

    // Assess
    expect(repeat).toMatchObject({ kind: 'already-applied', page: { keywords: 'coats, sale' } });
  });

  it('answers a missing page as not found and creates nothing', async () => {
    // Act
    const missing = await store.pages.applyMetadata('contract-missing', {
      patch: { title: 'x' },
      updatedBy: 'alice',
      idempotencyKey: 'run-5/1/0',
    });

    // Assess
    expect(missing).toEqual({ kind: 'not-found' });
    expect(await store.pages.getPage('contract-missing')).toBeUndefined();
  });

  it(`remembers at least the newest ${PAGE_APPLIED_KEYS_KEPT} keys, in bounded space`, async () => {
    // Prepare
    const pageId = await freshPage();
    const writes = 2 * PAGE_APPLIED_KEYS_KEPT + 1;
    const write = (index: number) =>
      store.pages.applyMetadata(pageId, {
        patch: { title: `Title ${index}` },
        updatedBy: 'alice',
        idempotencyKey: `run-6/${index}/0`,
      });
    const updatesBefore = store.updates();

    // Act
    for (let index = 0; index < writes; index += 1) await write(index);
    const updatesAfter = store.updates();
    const newest = await write(writes - PAGE_APPLIED_KEYS_KEPT);
    const oldest = await write(0);

    // Assess: the newest keys are still refused; the oldest was trimmed (once, past twice the bound).
    expect(newest.kind).toBe('already-applied');
    expect(oldest.kind).toBe('written');
    if (updatesBefore !== undefined && updatesAfter !== undefined) {
      expect(updatesAfter - updatesBefore).toBe(writes + 1);
    }
  });
});
