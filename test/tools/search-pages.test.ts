import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { SEARCH_PAGES_MAX_SCANNED, searchPagesTool } from '../../lambdas/tools/search-pages.js';
import type { PageInput } from '../support/in-memory-page-store.js';
import { admin, createToolContext, editor } from './page-tool-fixtures.js';

describe('search_pages', () => {
  it('matches case-insensitively and only over pages the acting user may access', async () => {
    // Prepare: page 14 mentions spring in its title but the editor may not access it.
    const context = createToolContext(editor);

    // Act
    const outcome = await searchPagesTool.execute({ query: 'SPRING' }, context);

    // Assess
    const result = JSON.parse(outcome.content);
    expect(outcome.isError).toBe(false);
    expect(result.complete).toBe(true);
    expect(result.matches).toEqual([
      expect.objectContaining({
        pageId: '12',
        matchedIn: 'body',
        snippet: expect.stringContaining('Spring'),
      }),
    ]);
  });

  it('finds a text in the title, the description and the keywords', async () => {
    // Prepare
    const context = createToolContext(admin, [
      { pageId: 'a', language: 'en', title: 'Lunar calendar' },
      { pageId: 'b', language: 'en', description: 'About the lunar phases' },
      { pageId: 'c', language: 'en', keywords: 'moon, lunar' },
      { pageId: 'd', language: 'en', title: 'Solar' },
    ]);

    // Act
    const result = JSON.parse((await searchPagesTool.execute({ query: 'lunar' }, context)).content);

    // Assess
    expect(
      result.matches.map((match: { pageId: string; matchedIn: string }) => [match.pageId, match.matchedIn]),
    ).toEqual([
      ['a', 'title'],
      ['b', 'description'],
      ['c', 'keywords'],
    ]);
  });

  it('returns at most the requested number of matches', async () => {
    // Prepare
    const pages: PageInput[] = Array.from({ length: 12 }, (_, index) => ({
      pageId: `p${String(index).padStart(2, '0')}`,
      language: 'en',
      title: 'Spring',
    }));
    const context = createToolContext(admin, pages);

    // Act
    const result = JSON.parse(
      (await searchPagesTool.execute({ query: 'spring', limit: 3 }, context)).content,
    );

    // Assess
    expect(result.matches).toHaveLength(3);
    expect(result.complete).toBe(false);
  });

  it('stops scanning after the bounded number of pages and says the scan was incomplete', async () => {
    // Prepare: no page matches, so only the scan bound stops the search.
    const pages: PageInput[] = Array.from({ length: SEARCH_PAGES_MAX_SCANNED + 50 }, (_, index) => ({
      pageId: `p${String(index).padStart(5, '0')}`,
      language: 'en',
    }));
    const context = createToolContext(admin, pages);

    // Act
    const result = JSON.parse((await searchPagesTool.execute({ query: 'absent' }, context)).content);

    // Assess
    expect(result).toEqual({ matches: [], complete: false });
    expect(context.pages.callCounts.listPages).toBe(SEARCH_PAGES_MAX_SCANNED / 100);
  });

  it('refuses an empty query', () => {
    // Act
    const parsed = z.safeParse(searchPagesTool.input, { query: '   ' });

    // Assess
    expect(parsed.success).toBe(false);
  });
});
