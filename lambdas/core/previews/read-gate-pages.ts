import type { UserProfile } from '../identity.js';
import type { Page, PageMetadataPatch, PageMetadataWrite, PageStore, PageWriteOutcome } from '../pages.js';
import { type Clock, systemClock } from '../ports.js';

/**
 * How long a page record read for the read gate is reused for the same viewer. The gate's
 * answer depends on the viewer's rights (read fresh on every request) and on the page's id
 * and language (cached here): a page moved to another language is judged by its old
 * language for at most this long.
 */
export const READ_GATE_CACHE_TTL_MS = 30_000;
/** Viewers whose reads a container keeps; the least recently seen is dropped first. */
export const READ_GATE_CACHE_MAX_VIEWERS = 500;
/** Page records kept per viewer; the oldest is dropped first. */
export const READ_GATE_CACHE_MAX_PAGES_PER_VIEWER = 1_000;

export interface ReadGatePageCacheOptions {
  /** @default READ_GATE_CACHE_TTL_MS */
  readonly ttlMs?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  /** @default READ_GATE_CACHE_MAX_VIEWERS */
  readonly maxViewers?: number;
  /** @default READ_GATE_CACHE_MAX_PAGES_PER_VIEWER */
  readonly maxPagesPerViewer?: number;
}

interface CachedPage {
  page: Page | undefined;
  expiresAt: number;
}

/**
 * Seed 000 prices the read gate at "one bounded row read per pending call per render" and
 * says a queue of thousands needs the answer cached per viewer. This cache does both halves:
 * `getPage` calls a viewer's gate issues while one render is built (the same turn of the
 * event loop) are coalesced into ONE `getPages` call (one BatchGetItem for the whole inbox
 * page), and the records read are reused for that viewer for a bounded time.
 *
 * Only the read gate reads through it; the preview itself and the write always read fresh.
 *
 * @example
 * const cache = new ReadGatePageCache(pages);
 * const gatePages = cache.forViewer(viewer); // give this to mayViewerReadPreview
 */
export class ReadGatePageCache {
  private readonly pages: PageStore;
  private readonly ttlMs: number;
  private readonly clock: Clock;
  private readonly maxViewers: number;
  private readonly maxPagesPerViewer: number;
  private readonly viewers = new Map<string, ViewerPageReads>();

  public constructor(pages: PageStore, options: ReadGatePageCacheOptions = {}) {
    this.pages = pages;
    this.ttlMs = options.ttlMs ?? READ_GATE_CACHE_TTL_MS;
    this.clock = options.clock ?? systemClock;
    this.maxViewers = options.maxViewers ?? READ_GATE_CACHE_MAX_VIEWERS;
    this.maxPagesPerViewer = options.maxPagesPerViewer ?? READ_GATE_CACHE_MAX_PAGES_PER_VIEWER;
  }

  /** A page store for the read gate of one viewer: batched, cached reads; writes pass through. */
  public forViewer(viewer: Pick<UserProfile, 'userId'>): PageStore {
    let reads = this.viewers.get(viewer.userId);
    if (reads) {
      this.viewers.delete(viewer.userId);
    } else {
      reads = new ViewerPageReads(this.pages, this.ttlMs, this.clock, this.maxPagesPerViewer);
    }
    // Re-inserted last: Map order is the recency order the eviction below relies on.
    this.viewers.set(viewer.userId, reads);
    while (this.viewers.size > this.maxViewers) {
      const oldest = this.viewers.keys().next().value;
      if (oldest === undefined) break;
      this.viewers.delete(oldest);
    }
    return reads;
  }
}

const cachesByStore = new WeakMap<PageStore, ReadGatePageCache>();

/**
 * The read gate's page store for `viewer` over `pages`: one cache per page store (so per
 * container deployed, per runtime locally), created on first use.
 */
export function readGatePagesFor(pages: PageStore, viewer: Pick<UserProfile, 'userId'>): PageStore {
  let cache = cachesByStore.get(pages);
  if (!cache) {
    cache = new ReadGatePageCache(pages);
    cachesByStore.set(pages, cache);
  }
  return cache.forViewer(viewer);
}

class ViewerPageReads implements PageStore {
  private readonly cached = new Map<string, CachedPage>();
  private readonly inFlight = new Map<string, Promise<Page | undefined>>();
  private queued = new Map<string, PromiseWithResolvers<Page | undefined>>();

  public constructor(
    private readonly pages: PageStore,
    private readonly ttlMs: number,
    private readonly clock: Clock,
    private readonly maxPages: number,
  ) {}

  public getPage(pageId: string): Promise<Page | undefined> {
    const hit = this.cached.get(pageId);
    if (hit && hit.expiresAt > this.clock.now().getTime()) return Promise.resolve(hit.page);
    if (hit) this.cached.delete(pageId);
    const pending = this.inFlight.get(pageId) ?? this.queued.get(pageId)?.promise;
    if (pending) return pending;
    const waiter = Promise.withResolvers<Page | undefined>();
    if (this.queued.size === 0) setImmediate(() => this.flush());
    this.queued.set(pageId, waiter);
    return waiter.promise;
  }

  public async getPages(pageIds: readonly string[]): Promise<Map<string, Page>> {
    const pages = await Promise.all([...new Set(pageIds)].map((pageId) => this.getPage(pageId)));
    return new Map(
      pages.filter((page): page is Page => page !== undefined).map((page) => [page.pageId, page]),
    );
  }

  public listPages(options: { limit: number; cursor?: string }) {
    return this.pages.listPages(options);
  }

  public async updateMetadata(pageId: string, patch: PageMetadataPatch, updatedBy: string): Promise<Page> {
    this.cached.delete(pageId);
    return this.pages.updateMetadata(pageId, patch, updatedBy);
  }

  public async applyMetadata(pageId: string, write: PageMetadataWrite): Promise<PageWriteOutcome> {
    this.cached.delete(pageId);
    return this.pages.applyMetadata(pageId, write);
  }

  public async putPage(page: Page): Promise<void> {
    this.cached.delete(page.pageId);
    await this.pages.putPage(page);
  }

  /** One `getPages` for everything asked since the last flush. */
  private flush(): void {
    const batch = this.queued;
    this.queued = new Map();
    const read = this.pages.getPages([...batch.keys()]);
    for (const [pageId, waiter] of batch) this.inFlight.set(pageId, waiter.promise);
    read.then(
      (pages) => {
        const expiresAt = this.clock.now().getTime() + this.ttlMs;
        for (const [pageId, waiter] of batch) {
          this.remember(pageId, { page: pages.get(pageId), expiresAt });
          this.inFlight.delete(pageId);
          waiter.resolve(pages.get(pageId));
        }
      },
      (error: unknown) => {
        // Nothing is cached from a failed read: the gate fails closed now and asks again next time.
        for (const [pageId, waiter] of batch) {
          this.inFlight.delete(pageId);
          waiter.reject(error);
        }
      },
    );
  }

  private remember(pageId: string, entry: CachedPage): void {
    this.cached.delete(pageId);
    this.cached.set(pageId, entry);
    while (this.cached.size > this.maxPages) {
      const oldest = this.cached.keys().next().value;
      if (oldest === undefined) break;
      this.cached.delete(oldest);
    }
  }
}
