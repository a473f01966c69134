import * as z from 'zod/mini';
import { excerptOf } from '../core/excerpt-text.js';
import { mayAccessPage } from '../core/pages.js';
import { defineTool } from '../core/tools/tool.js';
import { summarisePage } from './page-text.js';

export const SEARCH_PAGES_DEFAULT_LIMIT = 10;
export const SEARCH_PAGES_MAX_LIMIT = 20;
/** Pages one search reads at most: the built-in store has no index, so the scan is bounded. */
export const SEARCH_PAGES_MAX_SCANNED = 1000;
const SCAN_BATCH_SIZE = 100;
const SNIPPET_MAX_CHARACTERS = 160;

const SEARCHED_FIELDS = ['title', 'description', 'keywords', 'body'] as const;

/**
 * `search_pages`: a case-insensitive substring search over title, description, keywords and
 * body of the pages the acting user may access. At most `limit` matches, at most
 * {@link SEARCH_PAGES_MAX_SCANNED} pages read; `complete: false` says the scan stopped early.
 *
 * @example
 * await searchPagesTool.execute({ query: 'spring' }, context)
 * // { content: '{"matches":[{"pageId":"12",...,"matchedIn":"description","snippet":"Spring sale"}],"complete":true}', ... }
 */
export const searchPagesTool = defineTool({
  name: 'search_pages',
  description:
    'Searches the pages you may access for a text (case-insensitive) in title, description, keywords and body.',
  effect: 'read',
  input: z.strictObject({
    query: z.string().check(z.trim(), z.minLength(1), z.maxLength(200), z.describe('The text to look for.')),
    limit: z
      .optional(z.number().check(z.int(), z.gte(1), z.lte(SEARCH_PAGES_MAX_LIMIT)))
      .check(z.describe(`How many matches to return, at most ${SEARCH_PAGES_MAX_LIMIT}.`)),
  }),
  async execute(args, context) {
    const needle = args.query.trim().toLowerCase();
    const limit = args.limit ?? SEARCH_PAGES_DEFAULT_LIMIT;
    const matches: Array<ReturnType<typeof summarisePage> & { matchedIn: string; snippet: string }> = [];
    let scanned = 0;
    let cursor: string | undefined;
    let complete = false;
    while (matches.length < limit && scanned < SEARCH_PAGES_MAX_SCANNED) {
      const batch = await context.pages.listPages({
        limit: Math.min(SCAN_BATCH_SIZE, SEARCH_PAGES_MAX_SCANNED - scanned),
        ...(cursor === undefined ? {} : { cursor }),
      });
      let examined = 0;
      for (const page of batch.pages) {
        if (matches.length >= limit) break;
        examined += 1;
        if (!mayAccessPage(context.actingUser, page)) continue;
        const field = SEARCHED_FIELDS.find((name) => page[name].toLowerCase().includes(needle));
        if (field === undefined) continue;
        matches.push({
          ...summarisePage(page),
          matchedIn: field,
          snippet: snippetAround(page[field], needle),
        });
      }
      scanned += batch.pages.length;
      cursor = batch.cursor;
      if (cursor === undefined) {
        // Complete only when every page of the store was looked at, not just read.
        complete = examined === batch.pages.length;
        break;
      }
    }
    return { content: JSON.stringify({ matches, complete }), isError: false };
  },
});

/** A short window of `text` around the first match, so the model sees why a page matched. */
function snippetAround(text: string, needle: string): string {
  const position = text.toLowerCase().indexOf(needle);
  const start = Math.max(0, position - 40);
  const window = text.slice(start, start + SNIPPET_MAX_CHARACTERS * 2).replace(/\s+/g, ' ');
  return `${start > 0 ? '…' : ''}${excerptOf(window, SNIPPET_MAX_CHARACTERS)}`;
}
