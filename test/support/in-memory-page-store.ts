import type { z } from 'zod';
import { CountersignError } from '../../lambdas/core/errors.js';
import {
  PAGE_METADATA_FIELDS,
  type Page,
  type PageMetadataPatch,
  type PageStore,
  pageSchema,
} from '../../lambdas/core/pages.js';

/** A page as a test writes it: everything but the id and language has a default. */
export type PageInput = z.input<typeof pageSchema>;

/** How many times each port method was called, so tests can assert that reads stay bounded. */
export interface PageStoreCallCounts {
  getPage: number;
  getPages: number;
  listPages: number;
  updateMetadata: number;
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
    putPage: 0,
  };
  private readonly pages = new Map<string, Page>();
  private readonly now: () => Date;

  public constructor(pages: readonly PageInput[] = [], options: { now?: () => Date } = {}) {
    this.now = options.now ?? (() => new Date());
    for (const page of pages) this.pages.set(page.pageId, pageSchema.parse(page));
  }

  public async getPage(pageId: string): Promise<Page | undefined> {
    this.callCounts.getPage += 1;
    const page = this.pages.get(pageId);
    return page === undefined ? undefined : structuredClone(page);
  }

  public async getPages(pageIds: readonly string[]): Promise<Map<string, Page>> {
    this.callCounts.getPages += 1;
    const found = new Map<string, Page>();
    for (const pageId of pageIds) {
      const page = this.pages.get(pageId);
      if (page !== undefined) found.set(pageId, structuredClone(page));
    }
    return found;
  }

  public async listPages(options: {
    limit: number;
    cursor?: string;
  }): Promise<{ pages: Page[]; cursor?: string }> {
    this.callCounts.listPages += 1;
    const startAfter = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const ordered = [...this.pages.keys()].sort();
    const remaining = startAfter === undefined ? ordered : ordered.filter((pageId) => pageId > startAfter);
    const slice = remaining.slice(0, Math.max(0, options.limit));
    const pages = slice.map((pageId) => structuredClone(this.pages.get(pageId) as Page));
    const last = slice.at(-1);
    return last !== undefined && remaining.length > slice.length
      ? { pages, cursor: encodeCursor(last) }
      : { pages };
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
    this.pages.set(pageId, updated);
    return structuredClone(updated);
  }

  public async putPage(page: Page): Promise<void> {
    this.callCounts.putPage += 1;
    this.pages.set(page.pageId, structuredClone(pageSchema.parse(page)));
  }
}

// Opaque to callers, like a DynamoDB LastEvaluatedKey would be.
function encodeCursor(pageId: string): string {
  return Buffer.from(JSON.stringify({ after: pageId }), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (parsed as { after?: unknown }).after === 'string'
    ) {
      return (parsed as { after: string }).after;
    }
  } catch {
    // Fall through to the refusal below: a malformed cursor is client input, not a crash.
  }
  throw new CountersignError('bad-request', 'The cursor is not valid.', { field: 'cursor' });
}
