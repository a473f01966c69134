import * as z from 'zod/mini';
import { excerptOf } from '../core/excerpt-text.js';
import { mayAccessPage, PAGE_NOT_AVAILABLE } from '../core/pages.js';
import { defineTool } from '../core/tools/tool.js';
import { pageIdArgument } from './page-arguments.js';

/** How much of a page body the model is shown: enough to talk about it, bounded for the context window. */
export const BODY_EXCERPT_MAX_CHARACTERS = 2000;

/**
 * `get_page`: reads one page of the built-in content store as the acting user. A page that is
 * missing and a page the user may not access are refused with the same `PAGE_NOT_AVAILABLE`
 * text, so the tool cannot be used to probe the page tree.
 *
 * @example
 * await getPageTool.execute({ pageId: '12' }, context)
 * // { content: '{"pageId":"12","language":"en",...,"bodyExcerpt":"..."}', isError: false }
 */
export const getPageTool = defineTool({
  name: 'get_page',
  description:
    'Reads one page: its metadata (title, description, keywords, author, Open Graph fields) and an excerpt of its body.',
  effect: 'read',
  input: z.strictObject({
    pageId: pageIdArgument('The id of the page to read.'),
  }),
  async execute({ pageId }, context) {
    const page = await context.pages.getPage(pageId);
    if (!mayAccessPage(context.actingUser, page)) return { content: PAGE_NOT_AVAILABLE, isError: true };
    const view = {
      pageId: page.pageId,
      language: page.language,
      slug: page.slug,
      title: page.title,
      description: page.description,
      keywords: page.keywords,
      author: page.author,
      ogTitle: page.ogTitle,
      ogDescription: page.ogDescription,
      updatedAt: page.updatedAt,
      bodyExcerpt: excerptOf(page.body, BODY_EXCERPT_MAX_CHARACTERS),
    };
    return { content: JSON.stringify(view), isError: false };
  },
});
