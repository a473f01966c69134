import { describe, expect, it } from 'vitest';
import { PAGE_NOT_AVAILABLE } from '../../lambdas/core/pages.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { appendPageKeywordsTool } from '../../lambdas/tools/append-page-keywords.js';
import { createToolContext, editor } from './page-tool-fixtures.js';

const tool = appendPageKeywordsTool;
// The tool implements the optional preview and precondition contracts; fail loudly if not.
const preview = tool.preview?.bind(tool) ?? (() => Promise.reject(new Error('preview is missing')));
const readPrecondition =
  tool.readPrecondition?.bind(tool) ?? (() => Promise.reject(new Error('readPrecondition is missing')));

describe('append_page_keywords', () => {
  it('adds only the keywords the page lacks (any case), after the ones it has', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const outcome = await tool.execute({ pageId: '12', keywords: ['Winter', 'sale', 'sale'] }, context);

    // Assess
    expect(outcome).toEqual({ content: 'Added to page 12 (en): sale.', isError: false });
    expect((await context.pages.getPage('12'))?.keywords).toBe('coats, winter, sale');
  });

  it('previews the keywords before and after, and reads a version that changes with them', async () => {
    // Prepare
    const context = createToolContext(editor);
    const args = { pageId: '12', keywords: ['sale'] };

    // Act
    const lines = await preview(args, editor, context);
    const before = await readPrecondition(args, editor, context);
    await context.pages.updateMetadata('12', { title: 'Other title' }, 'someone');
    const afterTitle = await readPrecondition(args, editor, context);
    await context.pages.updateMetadata('12', { keywords: 'coats' }, 'someone');
    const afterKeywords = await readPrecondition(args, editor, context);

    // Assess: only the operand (the keywords) moves the version.
    expect(lines).toEqual([
      'Page 12 (en): 1 keyword would be added.',
      'keywords: "coats, winter" → "coats, winter, sale"',
    ]);
    expect(before).toBe('page-keywords:{"keywords":"coats, winter","language":"en","pageId":"12"}');
    expect(afterTitle).toBe(before);
    expect(afterKeywords).not.toBe(before);
  });

  it('gives a missing and a forbidden page the same refusal, the same preview and the same version', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const missing = await tool.execute({ pageId: '999', keywords: ['x'] }, context);
    const forbidden = await tool.execute({ pageId: '14', keywords: ['x'] }, context);

    // Assess
    expect(missing).toEqual({ content: PAGE_NOT_AVAILABLE, isError: true });
    expect(forbidden).toEqual(missing);
    expect(await preview({ pageId: '14', keywords: ['x'] }, editor, context)).toEqual([PAGE_NOT_AVAILABLE]);
    expect(await readPrecondition({ pageId: '14', keywords: ['x'] }, editor, context)).toBe(
      await readPrecondition({ pageId: '999', keywords: ['x'] }, editor, context),
    );
  });

  it('does not write when the version it is handed is not the page as it is now', async () => {
    // Prepare
    const context = createToolContext(editor);
    const sealed = await readPrecondition({ pageId: '12', keywords: ['sale'] }, editor, context);
    await context.pages.updateMetadata('12', { keywords: 'coats' }, 'someone');

    // Act
    const outcome = await tool.execute(
      { pageId: '12', keywords: ['sale'] },
      { ...context, precondition: sealed },
    );

    // Assess
    expect(outcome).toEqual({
      content: TEXTS.recordChangedDuringWrite('append_page_keywords'),
      isError: true,
      recordChanged: true,
    });
    expect((await context.pages.getPage('12'))?.keywords).toBe('coats');
  });

  it('writes in one conditional write: an edit landing between its read and its write wins, and nothing is appended', async () => {
    // Prepare: the edit lands right after the tool read the page (the window a read-then-write left open).
    const context = createToolContext(editor);
    const sealed = await readPrecondition({ pageId: '12', keywords: ['sale'] }, editor, context);
    const pages = context.pages;
    const getPage = pages.getPage.bind(pages);
    pages.getPage = async (pageId) => {
      const page = await getPage(pageId);
      await pages.updateMetadata('12', { keywords: 'coats, boots' }, 'someone');
      return page;
    };

    // Act
    const outcome = await tool.execute(
      { pageId: '12', keywords: ['sale'] },
      { ...context, precondition: sealed },
    );

    // Assess
    expect(outcome.recordChanged).toBe(true);
    expect((await getPage('12'))?.keywords).toBe('coats, boots');
    expect(pages.callCounts.applyMetadata).toBe(1);
  });

  it('applies a call once: run again with its idempotency key after its write landed, it writes nothing more', async () => {
    // Prepare: the version sealed at the pause, before the first attempt wrote.
    const context = createToolContext(editor);
    const args = { pageId: '12', keywords: ['sale'] };
    const sealed = await readPrecondition(args, editor, context);

    // Act: the first attempt wrote, then its step failed and was retried with the same key.
    const first = await tool.execute(args, { ...context, precondition: sealed });
    const retried = await tool.execute(args, { ...context, precondition: sealed });
    const otherCall = await tool.execute(
      { pageId: '12', keywords: ['spring'] },
      {
        ...context,
        idempotencyKey: 'run-1/1/1',
        precondition: await readPrecondition(args, editor, context),
      },
    );

    // Assess
    expect(first).toEqual({ content: 'Added to page 12 (en): sale.', isError: false });
    expect(retried).toEqual(first);
    expect(otherCall).toEqual({ content: 'Added to page 12 (en): spring.', isError: false });
    expect((await context.pages.getPage('12'))?.keywords).toBe('coats, winter, sale, spring');
  });
});
