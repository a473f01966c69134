import * as z from 'zod/mini';
import { isCountersignError } from '../core/errors.js';
import { mayAccessPage, type Page } from '../core/pages.js';
import { defineTool } from '../core/tools/tool.js';
import { summarisePage } from './page-text.js';

export const LIST_PAGES_DEFAULT_LIMIT = 20;
export const LIST_PAGES_MAX_LIMIT = 50;
/** Store reads one call may make; a user who sees few pages gets a short page and a cursor. */
export const LIST_PAGES_MAX_STORE_READS = 5;

/**
 * `list_pages`: lists the pages the acting user may access, in store order, with an opaque
 * cursor for the next page of results. Pages the user may not access are left out silently.
 *
 * @example
 * await listPagesTool.execute({ limit: 10 }, context)
 * // { content: '{"pages":[{"pageId":"12","language":"en","slug":"/","title":"Home"}]}', isError: false }
 */
export const listPagesTool = defineTool({
  name: 'list_pages',
  description:
    'Lists the pages you may access (id, language, slug, title). Pass the returned cursor to get more.',
  effect: 'read',
  input: z.strictObject({
    limit: z
      .optional(z.number().check(z.int(), z.gte(1), z.lte(LIST_PAGES_MAX_LIMIT)))
      .check(z.describe(`How many pages to return, at most ${LIST_PAGES_MAX_LIMIT}.`)),
    cursor: z
      .optional(z.string().check(z.minLength(1), z.maxLength(2000)))
      .check(z.describe('The cursor a previous call returned.')),
  }),
  async execute(args, context) {
    const limit = args.limit ?? LIST_PAGES_DEFAULT_LIMIT;
    const visible: Page[] = [];
    let cursor = args.cursor;
    try {
      for (let read = 0; read < LIST_PAGES_MAX_STORE_READS && visible.length < limit; read += 1) {
        // Ask for exactly what is still missing, so no page is read past and skipped by the cursor.
        const batch = await context.pages.listPages({
          limit: limit - visible.length,
          ...(cursor === undefined ? {} : { cursor }),
        });
        visible.push(...batch.pages.filter((page) => mayAccessPage(context.actingUser, page)));
        cursor = batch.cursor;
        if (cursor === undefined) break;
      }
    } catch (error) {
      if (isCountersignError(error, 'bad-request')) {
        return { content: 'The cursor is not valid; list again without a cursor.', isError: true };
      }
      throw error;
    }
    const result = { pages: visible.map(summarisePage), ...(cursor === undefined ? {} : { cursor }) };
    return { content: JSON.stringify(result), isError: false };
  },
});
