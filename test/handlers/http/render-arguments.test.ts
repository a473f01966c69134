import { describe, expect, it } from 'vitest';
import { excerptArguments } from '../../../lambdas/core/previews/excerpt-arguments.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { escapeHtml } from '../../../lambdas/handlers/http/escape-html.js';
import { renderArguments } from '../../../lambdas/handlers/http/render-arguments.js';

describe("renderArguments (a call's arguments on the page)", () => {
  it('draws exact arguments as indented JSON, escaped, with no marker', () => {
    // Prepare
    const args = { pageId: '12', title: '<b>"sale"</b>', tags: ['a', 1, null, { deep: [] }], empty: {} };

    // Act
    const html = renderArguments(args);

    // Assess
    expect(html).toBe(escapeHtml(JSON.stringify(args, null, 2)));
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
    expect(html).toContain(`&quot;description&quot;: &quot;${'d'.repeat(2_000)}&quot;${textMarker},\n`);
    expect(TEXTS.argumentTextCut(12_345)).toBe('… (12,345 characters in all — show full arguments)');
    expect(html).toMatch(
      new RegExp(
        `,\\n    <button type="button" class="cut full-arguments">… \\(${(3_000 - listCut.shownEntries).toLocaleString('en-US')} more of 3,000 entries — show full arguments\\)</button>\\n  \\]\\n\\}$`,
      ),
    );
  });
});
