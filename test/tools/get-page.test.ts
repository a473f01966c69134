import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { PAGE_NOT_AVAILABLE } from '../../lambdas/core/pages.js';
import { BODY_EXCERPT_MAX_CHARACTERS, getPageTool } from '../../lambdas/tools/get-page.js';
import { createToolContext, editor } from './page-tool-fixtures.js';

describe('get_page', () => {
  it('returns the metadata and a body excerpt of a page the acting user may access', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const outcome = await getPageTool.execute({ pageId: '12' }, context);

    // Assess
    expect(outcome.isError).toBe(false);
    expect(JSON.parse(outcome.content)).toMatchObject({
      pageId: '12',
      language: 'en',
      title: 'Offers',
      description: 'Winter sale on all coats',
      bodyExcerpt: 'Our winter collection is on sale. Spring arrives soon.',
    });
  });

  it('cuts a long body to an excerpt ending in an ellipsis', async () => {
    // Prepare
    const context = createToolContext(editor, [{ pageId: '12', language: 'en', body: 'x'.repeat(5000) }]);

    // Act
    const outcome = await getPageTool.execute({ pageId: '12' }, context);

    // Assess
    const excerpt: string = JSON.parse(outcome.content).bodyExcerpt;
    expect(excerpt).toHaveLength(BODY_EXCERPT_MAX_CHARACTERS);
    expect(excerpt.endsWith('…')).toBe(true);
  });

  it('refuses a missing page and a forbidden page with the same text', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const missing = await getPageTool.execute({ pageId: '999' }, context);
    const forbidden = await getPageTool.execute({ pageId: '14' }, context);

    // Assess
    expect(missing).toEqual({ content: PAGE_NOT_AVAILABLE, isError: true });
    expect(forbidden).toEqual(missing);
  });

  it('refuses a page in a language the acting user may not access', async () => {
    // Prepare: page 13 is German; the editor may touch the page but only English.
    const context = createToolContext(editor);

    // Act
    const outcome = await getPageTool.execute({ pageId: '13' }, context);

    // Assess
    expect(outcome).toEqual({ content: PAGE_NOT_AVAILABLE, isError: true });
  });

  it('rejects unknown input fields', () => {
    // Act
    const parsed = z.safeParse(getPageTool.input, { pageId: '12', extra: true });

    // Assess
    expect(parsed.success).toBe(false);
  });
});
