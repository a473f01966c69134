import type { Page } from '../core/pages.js';

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
