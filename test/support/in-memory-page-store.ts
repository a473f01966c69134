import type { z } from 'zod';
import { CountersignError } from '../../lambdas/core/errors.js';
import {
  PAGE_APPLIED_KEYS_KEPT,
  PAGE_METADATA_FIELDS,
  type Page,
  type PageMetadataPatch,
  type PageMetadataWrite,
  type PageStore,
  type PageWriteOutcome,
  pageSchema,
} from '../../lambdas/core/pages.js';
import { InMemoryCollection } from './in-memory-collection.js';

/** A page as a test writes it: everything but the id and language has a default. */
export type PageInput = z.input<typeof pageSchema>;

/** How many times each port method was called, so tests can assert that reads stay bounded. */
export interface PageStoreCallCounts {
  getPage: number;
  getPages: number;
  listPages: number;
  updateMetadata: number;
  applyMetadata: number;
  putPage: number;
}

/**
 * An honest in-memory `PageStore` for unit tests: pages in id order, an opaque cursor,
 * copies in and out (so a caller cannot mutate what is stored), and the same "not found"
 * behaviour a real store has.
 *
 * @example
 * const pages = new InMemoryPageStore([{ pageId: '12', language: 'en', title: 'Home' }]);
 * await pages.getPage('12');
 */
export class InMemoryPageStore implements PageStore {
  public readonly callCounts: PageStoreCallCounts = {
    getPage: 0,
    getPages: 0,
    listPages: 0,
    updateMetadata: 0,
    applyMetadata: 0,
    putPage: 0,
  };
  private readonly pages = new InMemoryCollection<Page>((page) => page.pageId);
  /** The idempotency keys each page applied, oldest first, bounded as the DynamoDB store's. */
  private readonly appliedKeys = new Map<string, string[]>();
  private readonly now: () => Date;

  public constructor(pages: readonly PageInput[] = [], options: { now?: () => Date } = {}) {
    this.now = options.now ?? (() => new Date());
    for (const page of pages) this.pages.put(pageSchema.parse(page));
  }

  public async getPage(pageId: string): Promise<Page | undefined> {
    this.callCounts.getPage += 1;
    return this.pages.get(pageId);
  }

  public async getPages(pageIds: readonly string[]): Promise<Map<string, Page>> {
    this.callCounts.getPages += 1;
    const found = new Map<string, Page>();
    for (const pageId of pageIds) {
      const page = this.pages.get(pageId);
      if (page !== undefined) found.set(pageId, page);
    }
    return found;
  }

  public async listPages(options: {
    limit: number;
    cursor?: string;
  }): Promise<{ pages: Page[]; cursor?: string }> {
    this.callCounts.listPages += 1;
    const { items, cursor } = this.pages.page(options);
    return cursor === undefined ? { pages: items } : { pages: items, cursor };
  }

  public async updateMetadata(pageId: string, patch: PageMetadataPatch, updatedBy: string): Promise<Page> {
    this.callCounts.updateMetadata += 1;
    const page = this.pages.get(pageId);
    if (page === undefined) throw new CountersignError('not-found', 'Page not found.');
    const updated: Page = { ...page, updatedAt: this.now().toISOString(), updatedBy };
    for (const field of PAGE_METADATA_FIELDS) {
      const value = patch[field];
      if (value !== undefined) updated[field] = value;
    }
    this.pages.put(updated);
    return structuredClone(updated);
  }

  /** Check and set with no `await` between them: atomic, as the DynamoDB store's one conditional write. */
  public async applyMetadata(pageId: string, write: PageMetadataWrite): Promise<PageWriteOutcome> {
    this.callCounts.applyMetadata += 1;
    const page = this.pages.get(pageId);
    if (page === undefined) return { kind: 'not-found' };
    const applied = this.appliedKeys.get(pageId) ?? [];
    if (applied.includes(write.idempotencyKey))
      return { kind: 'already-applied', page: structuredClone(page) };
    const expected = Object.entries(write.expect ?? {}) as Array<[keyof Page, string | undefined]>;
    if (expected.some(([field, value]) => value !== undefined && page[field] !== value)) {
      return { kind: 'record-changed' };
    }
    const kept = [...applied, write.idempotencyKey];
    this.appliedKeys.set(
      pageId,
      kept.length > 2 * PAGE_APPLIED_KEYS_KEPT ? kept.slice(-PAGE_APPLIED_KEYS_KEPT) : kept,
    );
    const updated: Page = { ...page, updatedAt: this.now().toISOString(), updatedBy: write.updatedBy };
    for (const field of PAGE_METADATA_FIELDS) {
      const value = write.patch[field];
      if (value !== undefined) updated[field] = value;
    }
    this.pages.put(updated);
    return { kind: 'written', page: structuredClone(updated) };
  }

  public async putPage(page: Page): Promise<void> {
    this.callCounts.putPage += 1;
    this.pages.put(pageSchema.parse(page));
    // A replaced page starts afresh, as a DynamoDB put replaces the whole item.
    this.appliedKeys.delete(page.pageId);
  }
}
