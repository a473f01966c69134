import { excerptOf } from '../core/excerpt-text.js';
import type { UserProfile } from '../core/identity.js';
import { mayAccessPage, type Page } from '../core/pages.js';
import type { ToolContext } from '../core/tools/tool.js';

/** The fields of a page a listing shows: enough to pick one, not its content. */
export function summarisePage(page: Page): { pageId: string; language: string; slug: string; title: string } {
  return { pageId: page.pageId, language: page.language, slug: page.slug, title: page.title };
}

/** The longest page id a page tool accepts: the page schema's own limit. */
export const PAGE_ID_MAX_LENGTH = 100;

/** Seed 000: a preview shows only the fields the call would write, each a 120-character excerpt. */
export const PREVIEW_EXCERPT_MAX_CHARACTERS = 120;

/** A field's value on a preview line: `(empty)`, or its excerpt in quotes. */
export function describePreviewValue(value: string): string {
  return value === '' ? '(empty)' : `"${excerptOf(value, PREVIEW_EXCERPT_MAX_CHARACTERS)}"`;
}

/**
 * The page, when `user` may access it (page and language); `undefined` for missing and
 * forbidden alike, so a page tool cannot be used to probe for pages.
 */
export async function readPermittedPage(
  pageId: string,
  user: UserProfile,
  context: ToolContext,
): Promise<Page | undefined> {
  const page = await context.pages.getPage(pageId);
  return mayAccessPage(user, page) ? page : undefined;
}
