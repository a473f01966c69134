import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { PAGE_NOT_AVAILABLE } from '../../lambdas/core/pages.js';
import { needsApproval } from '../../lambdas/core/tools/tool.js';
import { toSpecification } from '../../lambdas/core/tools/tool-specification.js';
import { updatePageMetadataTool } from '../../lambdas/tools/update-page-metadata.js';
import { admin, createToolContext, createUser, editor } from './page-tool-fixtures.js';

const tool = updatePageMetadataTool;
// The tool implements the optional preview contract; fail loudly if that ever changes.
const capturePreview = tool.preview?.bind(tool) ?? (() => Promise.reject(new Error('preview is missing')));
/** The preview's lines (it also gives its text changes: see below). */
async function preview(...args: Parameters<typeof capturePreview>): Promise<string[]> {
  const produced = await capturePreview(...args);
  return Array.isArray(produced) ? produced : produced.lines;
}
const mayViewerReadPreview =
  tool.mayViewerReadPreview?.bind(tool) ??
  (() => Promise.reject(new Error('mayViewerReadPreview is missing')));

describe('update_page_metadata execute', () => {
  it('sets absolute values on the page as the acting user', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const outcome = await tool.execute(
      { pageId: '12', description: 'Spring sale', title: 'Spring' },
      context,
    );

    // Assess
    const page = await context.pages.getPage('12');
    expect(outcome).toEqual({ content: 'Updated page 12 (en): description, title.', isError: false });
    expect(page).toMatchObject({ description: 'Spring sale', title: 'Spring', keywords: 'coats, winter' });
    expect(page?.updatedBy).toBe('editor');
  });

  it('applies a call once: run again with its idempotency key, it does not write over what came after', async () => {
    // Prepare
    const context = createToolContext(editor);
    const args = { pageId: '12', description: 'Spring sale' };

    // Act: the call wrote; someone edited the page; the call's step was retried with its key.
    const first = await tool.execute(args, context);
    await context.pages.updateMetadata('12', { description: 'Edited by hand' }, 'someone');
    const retried = await tool.execute(args, context);

    // Assess
    expect(retried).toEqual(first);
    expect((await context.pages.getPage('12'))?.description).toBe('Edited by hand');
    expect(tool.idempotent).toBe(true);
  });

  it('refuses a missing page and a forbidden page with exactly the same outcome, writing nothing', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const missing = await tool.execute({ pageId: '999', title: 'x' }, context);
    const forbidden = await tool.execute({ pageId: '14', title: 'x' }, context);

    // Assess
    expect(missing).toEqual({ content: PAGE_NOT_AVAILABLE, isError: true });
    expect(forbidden).toEqual(missing);
    expect(context.pages.callCounts.applyMetadata).toBe(0);
  });

  it('refuses a page whose language the acting user may not access', async () => {
    // Prepare: page 13 is in the editor's page list but is German.
    const context = createToolContext(editor);

    // Act
    const outcome = await tool.execute({ pageId: '13', title: 'x' }, context);

    // Assess
    expect(outcome).toEqual({ content: PAGE_NOT_AVAILABLE, isError: true });
    expect((await context.pages.getPage('13'))?.title).toBe('Angebote');
  });

  it('is a write, so it always needs approval', () => {
    // Assess
    expect(tool.effect).toBe('write');
    expect(needsApproval(tool)).toBe(true);
  });
});

describe('update_page_metadata input', () => {
  it.each([
    ['no field to set', { pageId: '12' }],
    ['an unknown field', { pageId: '12', title: 'x', slug: '/x' }],
    ['a non-string value', { pageId: '12', title: 42 }],
    ['a title that is too long', { pageId: '12', title: 'x'.repeat(256) }],
    ['a description that is too long', { pageId: '12', description: 'x'.repeat(1001) }],
    ['a missing page id', { title: 'x' }],
  ])('refuses %s', (_, args) => {
    // Act
    const parsed = z.safeParse(tool.input, args);

    // Assess
    expect(parsed.success).toBe(false);
  });

  it('offers the model a strict JSON schema with the page id required', () => {
    // Act
    const specification = toSpecification(tool);

    // Assess
    expect(specification.inputSchema).toMatchObject({
      type: 'object',
      required: ['pageId'],
      additionalProperties: false,
    });
  });
});

describe('update_page_metadata preview', () => {
  it('says how many fields change and shows old and new value of each written field in input order', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const lines = await preview(
      { pageId: '12', description: 'Spring sale', keywords: 'coats, winter', author: 'Ana' },
      editor,
      context,
    );

    // Assess
    expect(lines).toEqual([
      'Page 12 (en): 2 fields would change.',
      'description: "Winter sale on all coats" → "Spring sale"',
      'keywords: unchanged',
      'author: (empty) → "Ana"',
    ]);
  });

  it('uses the singular for one changing field and shows an emptied value as (empty)', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const lines = await preview({ pageId: '12', description: '' }, editor, context);

    // Assess
    expect(lines).toEqual([
      'Page 12 (en): 1 field would change.',
      'description: "Winter sale on all coats" → (empty)',
    ]);
  });

  it('cuts both values to 120-character excerpts ending in an ellipsis', async () => {
    // Prepare
    const context = createToolContext(editor, [
      { pageId: '12', language: 'en', description: 'o'.repeat(300) },
    ]);

    // Act
    const lines = await preview({ pageId: '12', description: 'n'.repeat(121) }, editor, context);

    // Assess
    expect(lines[1]).toBe(`description: "${'o'.repeat(119)}…" → "${'n'.repeat(119)}…"`);
  });

  it("gives the whole texts of the fields that change, for the card's diff, and nothing of the rest", async () => {
    // Prepare
    const long = `${'word '.repeat(60)}end`;
    const context = createToolContext(editor, [
      { pageId: '12', language: 'en', description: long, title: 'Same' },
    ]);

    // Act
    const produced = await capturePreview(
      { pageId: '12', description: `${long} and more`, title: 'Same' },
      editor,
      context,
    );

    // Assess
    expect(Array.isArray(produced) ? [] : produced.changes).toEqual([
      { field: 'description', before: long, after: `${long} and more` },
    ]);
  });

  it('quotes each value with its quotes and line breaks escaped, so a value cannot draw another field', async () => {
    // Prepare: both the page's value and the proposed one try to read as more of the line.
    const context = createToolContext(editor, [
      { pageId: '12', language: 'en', description: 'Old" → "fine' },
    ]);
    const proposed = 'Spring" → "Spring sale"\nkeywords: "a" → "b';

    // Act
    const lines = await preview({ pageId: '12', description: proposed }, editor, context);

    // Assess
    expect(lines[1]).toBe(
      String.raw`description: "Old\" → \"fine" → "Spring\" → \"Spring sale\"\nkeywords: \"a\" → \"b"`,
    );
    expect(lines).toHaveLength(2);
  });

  it('keeps a value of exactly 120 characters whole', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const lines = await preview({ pageId: '12', title: 't'.repeat(120) }, editor, context);

    // Assess
    expect(lines[1]).toBe(`title: "Offers" → "${'t'.repeat(120)}"`);
  });

  it('shows only the fields the call writes, never the rest of the record', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const text = (await preview({ pageId: '12', title: 'Spring' }, editor, context)).join('\n');

    // Assess
    expect(text).not.toContain('Winter sale');
    expect(text).not.toContain('coats');
    expect(text).not.toContain('collection');
  });

  it('refuses missing, forbidden and wrong-language pages with the single neutral line', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const missing = await preview({ pageId: '999', title: 'x' }, editor, context);
    const forbidden = await preview({ pageId: '14', title: 'x' }, editor, context);
    const wrongLanguage = await preview({ pageId: '13', title: 'x' }, editor, context);

    // Assess
    expect(missing).toEqual([PAGE_NOT_AVAILABLE]);
    expect(forbidden).toEqual(missing);
    expect(wrongLanguage).toEqual(missing);
  });

  it('authorises against the acting user it is given, not the context user', async () => {
    // Prepare: the context carries an admin, the run's acting user is the editor.
    const context = createToolContext(admin);

    // Act
    const lines = await preview({ pageId: '14', title: 'x' }, editor, context);

    // Assess
    expect(lines).toEqual([PAGE_NOT_AVAILABLE]);
  });

  it('throws without echoing the arguments when they are not valid', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    const attempt = preview({ pageId: '12', secret: 'hunter2' } as never, editor, context);

    // Assess
    await expect(attempt).rejects.toThrow('The call arguments are not valid.');
  });

  it('writes nothing', async () => {
    // Prepare
    const context = createToolContext(editor);

    // Act
    await preview({ pageId: '12', title: 'Spring' }, editor, context);

    // Assess
    expect(context.pages.callCounts.applyMetadata).toBe(0);
    expect((await context.pages.getPage('12'))?.title).toBe('Offers');
  });
});

describe('update_page_metadata mayViewerReadPreview', () => {
  it('allows a viewer with page and language access', async () => {
    // Prepare
    const context = createToolContext(admin);

    // Act
    const allowed = await mayViewerReadPreview({ pageId: '12', title: 'x' }, editor, context);

    // Assess
    expect(allowed).toBe(true);
  });

  it('denies a viewer without access to the page or its language', async () => {
    // Prepare
    const context = createToolContext(admin);
    const operations = createUser({
      userId: 'ops',
      grants: ['agent_approve'],
      pageAccess: ['12'],
      languageAccess: ['de'],
    });

    // Act
    const forbiddenPage = await mayViewerReadPreview({ pageId: '14', title: 'x' }, editor, context);
    const wrongLanguage = await mayViewerReadPreview({ pageId: '12', title: 'x' }, operations, context);

    // Assess
    expect(forbiddenPage).toBe(false);
    expect(wrongLanguage).toBe(false);
  });

  it('denies when the page is missing, even for an admin', async () => {
    // Prepare
    const context = createToolContext(admin);

    // Act
    const allowed = await mayViewerReadPreview({ pageId: '999', title: 'x' }, admin, context);

    // Assess
    expect(allowed).toBe(false);
  });

  it('fails closed on arguments that are not valid', async () => {
    // Prepare
    const context = createToolContext(admin);

    // Act
    const allowed = await mayViewerReadPreview({ title: 'x' } as never, admin, context);

    // Assess
    expect(allowed).toBe(false);
  });
});
