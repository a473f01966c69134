import * as z from 'zod/mini';
import { allows, isAdmin, type UserProfile } from './identity.js';

/** The metadata fields `update_page_metadata` may set: absolute values, never relative edits. */
export const PAGE_METADATA_FIELDS = [
  'title',
  'description',
  'keywords',
  'author',
  'ogTitle',
  'ogDescription',
] as const;
export type PageMetadataField = (typeof PAGE_METADATA_FIELDS)[number];

export const pageSchema = z.object({
  pageId: z.string().check(z.minLength(1), z.maxLength(100)),
  language: z.string().check(z.minLength(2), z.maxLength(20)),
  slug: z._default(z.string().check(z.maxLength(500)), ''),
  body: z._default(z.string().check(z.maxLength(100_000)), ''),
  title: z._default(z.string().check(z.maxLength(1000)), ''),
  description: z._default(z.string().check(z.maxLength(5000)), ''),
  keywords: z._default(z.string().check(z.maxLength(2000)), ''),
  author: z._default(z.string().check(z.maxLength(500)), ''),
  ogTitle: z._default(z.string().check(z.maxLength(1000)), ''),
  ogDescription: z._default(z.string().check(z.maxLength(5000)), ''),
  updatedAt: z._default(z.string(), ''),
  updatedBy: z._default(z.string(), ''),
});

/** A page of the built-in content store (DynamoDB deployed, dynalite locally). */
export type Page = z.infer<typeof pageSchema>;

export type PageMetadataPatch = Partial<Record<PageMetadataField, string>>;

/** The fields a tool's write may be conditional on: what its precondition read. */
export type PageExpectation = Partial<Record<'language' | PageMetadataField, string>>;

/**
 * A tool call's metadata write: absolute values, applied at most once per call, and only on the
 * record the approval was decided on.
 */
export interface PageMetadataWrite {
  patch: PageMetadataPatch;
  updatedBy: string;
  /**
   * The call's idempotency key (`ToolExecutionContext.idempotencyKey`). The page remembers the
   * keys it applied (the most recent {@link PAGE_APPLIED_KEYS_KEPT} at least), so a retried call
   * is not applied twice.
   */
  idempotencyKey: string;
  /** Field values the write was decided on: if any differs when it lands, nothing is written. */
  expect?: PageExpectation;
}

/** How a conditional page write ended. */
export type PageWriteOutcome =
  | { kind: 'written'; page: Page }
  /** The page applied this key before (a retried call): nothing was written again. */
  | { kind: 'already-applied'; page: Page }
  /** A field differs from `expect`: nothing was written. */
  | { kind: 'record-changed' }
  | { kind: 'not-found' };

/** Keys a page remembers at least (it trims to this many once it holds twice as many). */
export const PAGE_APPLIED_KEYS_KEPT = 32;

/**
 * Port: the built-in page store. Reads are bounded (one item per page).
 */
export interface PageStore {
  getPage(pageId: string): Promise<Page | undefined>;
  /** Reads many pages with one batched request where the backend allows it. */
  getPages(pageIds: readonly string[]): Promise<Map<string, Page>>;
  listPages(options: { limit: number; cursor?: string }): Promise<{ pages: Page[]; cursor?: string }>;
  /** Sets absolute values; returns the page as written. Unconditional: seeding and admin edits. */
  updateMetadata(pageId: string, patch: PageMetadataPatch, updatedBy: string): Promise<Page>;
  /**
   * A tool's write: ONE conditional write that applies the patch only if the page has not
   * applied `idempotencyKey` yet and every `expect`ed field still holds its value.
   */
  applyMetadata(pageId: string, write: PageMetadataWrite): Promise<PageWriteOutcome>;
  putPage(page: Page): Promise<void>;
}

/**
 * The one string a tool answers for "no such page" and "you may not touch this page":
 * the same text for both, so a tool cannot be used to probe the page tree.
 */
export const PAGE_NOT_AVAILABLE = 'The page does not exist or you do not have access to it.';

/** Page access and language access, the two record checks a page tool makes for a user. */
export function mayAccessPage(user: UserProfile | undefined, page: Page | undefined): page is Page {
  if (!user || !page) return false;
  if (isAdmin(user)) return true;
  return allows(user.pageAccess, page.pageId) && allows(user.languageAccess, page.language);
}
