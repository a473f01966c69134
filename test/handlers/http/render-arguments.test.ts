import { describe, expect, it } from 'vitest';
import { excerptArguments } from '../../../lambdas/core/previews/excerpt-arguments.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { renderArguments } from '../../../lambdas/handlers/http/render-arguments.js';

/** The text a browser would show: tags dropped, entities decoded. */
function textOf(html: string): string {
  return html
    .replace(/<[^>]+>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

describe("renderArguments (a call's arguments on the page)", () => {
  it('draws exact arguments as their indented JSON text, every key and string isolated, with no marker', () => {
    // Prepare
    const args = { pageId: '12', title: '<b>"sale"</b>', tags: ['a', 1, null, { deep: [] }], empty: {} };

    // Act
    const html = renderArguments(args);

    // Assess
    expect(textOf(html)).toBe(JSON.stringify(args, null, 2));
    expect(html).toContain(
      '<bdi>&quot;title&quot;</bdi>: <bdi>&quot;&lt;b&gt;\\&quot;sale\\&quot;&lt;/b&gt;&quot;</bdi>',
    );
    expect(html).not.toContain('class="cut');
  });

  it('puts a marker with the full size right after each cut string and at the end of each cut list', () => {
    // Prepare
    const keywords = Array.from({ length: 3_000 }, (_, index) => `k${index}`);
    const shown = excerptArguments({ pageId: '12', description: 'd'.repeat(12_345), keywords });
    if (shown.kind !== 'excerpt') throw new Error('expected an excerpt');
    const listCut = shown.excerpt.cuts.find((cut) => cut.kind === 'entries');
    if (listCut?.kind !== 'entries') throw new Error('expected the list to be cut');

    // Act
    const html = renderArguments(shown.arguments, shown.excerpt.cuts);

    // Assess
    const textMarker = `<button type="button" class="cut full-arguments">${TEXTS.argumentTextCut(12_345)}</button>`;
    expect(html).toContain(
      `<bdi>&quot;description&quot;</bdi>: <bdi>&quot;${'d'.repeat(2_000)}&quot;</bdi>${textMarker},\n`,
    );
    expect(TEXTS.argumentTextCut(12_345)).toBe('… (12,345 characters in all — show full arguments)');
    const hidden = (3_000 - listCut.shownEntries).toLocaleString('en-US');
    expect(html).toMatch(
      new RegExp(
        `,\\n    <button type="button" class="cut full-arguments">… \\(${hidden} more of 3,000 entries — show full arguments\\)</button>\\n  \\]\\n\\}$`,
      ),
    );
  });
});
