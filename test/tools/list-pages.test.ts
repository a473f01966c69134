import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { LIST_PAGES_MAX_STORE_READS, listPagesTool } from '../../lambdas/tools/list-pages.js';
import type { PageInput } from '../support/in-memory-page-store.js';
import { admin, createToolContext, createUser, editor } from './page-tool-fixtures.js';

const manyPages: PageInput[] = Array.from({ length: 30 }, (_, index) => ({
  pageId: `p${String(index).padStart(2, '0')}`,
  language: 'en',
  title: `Page ${index}`,
}));

describe('list_pages', () => {
  it('lists only the pages the acting user may access', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const outcome = await listPagesTool.execute({}, context);

    // Assess: 13 is German and 14 is not in the editor's page list.
    expect(outcome.isError).toBe(false);
    expect(JSON.parse(outcome.content)).toEqual({
      pages: [{ pageId: '12', language: 'en', slug: '/offers', title: 'Offers' }],
    });
  });

  it('pages through results with the returned cursor without skipping or repeating a page', async () => {
    // Prepare
    const context = createToolContext(admin, manyPages);

    // Act
    const first = JSON.parse((await listPagesTool.execute({ limit: 20 }, context)).content);
    const second = JSON.parse(
      (await listPagesTool.execute({ limit: 20, cursor: first.cursor }, context)).content,
    );

    // Assess
    const ids = [...first.pages, ...second.pages].map((page: { pageId: string }) => page.pageId);
    expect(first.pages).toHaveLength(20);
    expect(second.cursor).toBeUndefined();
    expect(ids).toEqual(manyPages.map((page) => page.pageId));
  });

  it('hides pages the user may not see, within bounded store reads, and the cursor continues without gaps', async () => {
    // Prepare: the user may see every third page only.
    const visibleIds = manyPages.filter((_, index) => index % 3 === 0).map((page) => page.pageId);
    const user = createUser({ userId: 'sparse', pageAccess: visibleIds, languageAccess: '*' });
    const context = createToolContext(user, manyPages);

    // Act
    const listed: string[] = [];
    let cursor: string | undefined;
    let calls = 0;
    do {
      const result = JSON.parse(
        (await listPagesTool.execute({ limit: 5, ...(cursor ? { cursor } : {}) }, context)).content,
      );
      listed.push(...result.pages.map((page: { pageId: string }) => page.pageId));
      expect(result.pages.length).toBeLessThanOrEqual(5);
      cursor = result.cursor;
      calls += 1;
    } while (cursor !== undefined && calls < 20);

    // Assess
    expect(listed).toEqual(visibleIds);
    expect(context.pages.callCounts.listPages).toBeLessThanOrEqual(calls * LIST_PAGES_MAX_STORE_READS);
  });

  it('answers a malformed cursor with a refusal the model can act on', async () => {
    // Prepare
    const context = createToolContext(admin, manyPages);

    // Act
    const outcome = await listPagesTool.execute({ cursor: 'not-a-cursor' }, context);

    // Assess
    expect(outcome).toEqual({
      content: 'The cursor is not valid; list again without a cursor.',
      isError: true,
    });
  });

  it('refuses a limit above the maximum', () => {
    // Act
    const parsed = z.safeParse(listPagesTool.input, { limit: 500 });

    // Assess
    expect(parsed.success).toBe(false);
  });
});
