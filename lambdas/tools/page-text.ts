import type { UserProfile } from '../core/identity.js';
import { mayAccessPage, type Page } from '../core/pages.js';
import type { ToolContext } from '../core/tools/tool.js';

/** The fields of a page a listing shows: enough to pick one, not its content. */
export function summarisePage(page: Page): { pageId: string; language: string; slug: string; title: string } {
  return { pageId: page.pageId, language: page.language, slug: page.slug, title: page.title };
}

/** The longest page id a page tool accepts: the page schema's own limit. */
export const PAGE_ID_MAX_LENGTH = 100;

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
