import type { UserProfile } from '../core/identity.js';
import { mayAccessPage, type Page } from '../core/pages.js';
import type { ToolContext } from '../core/tools/tool.js';

/**
 * Cuts `text` to at most `maxCharacters` characters (code points, so an emoji is never split),
 * ending in `…` when it was cut. Shared by the page tools so every excerpt reads the same.
 *
 * @example
 * excerptOf('Spring sale on everything', 10) // 'Spring sa…'
 */
export function excerptOf(text: string, maxCharacters: number): string {
  const characters = Array.from(text);
  if (characters.length <= maxCharacters) return text;
  return `${characters.slice(0, Math.max(0, maxCharacters - 1)).join('')}…`;
}

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
