import { describe, expect, it } from 'vitest';
import { diffTextChanges } from '../../../lambdas/core/previews/diff-text-changes.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import type { PreviewTextChange } from '../../../lambdas/core/tools/tool.js';
import { renderTextDiffs as renderDiffs } from '../../../lambdas/handlers/http/render-text-diff.js';

/** As a card shows them: diffed when the run paused, drawn when the card is read. */
const renderTextDiffs = (changes: PreviewTextChange[]) => renderDiffs(diffTextChanges(changes));

const text = (html: string) => html.replace(/<[^>]+>/g, '');

describe('the word-level diff of a long text change', () => {
  it('marks removed and added words, keeps a few unchanged words around them and cuts the rest', () => {
    // Prepare
    const shared = Array.from({ length: 40 }, (_unused, index) => `w${index}`).join(' ');
    const before = `Our spring range ${shared} ends in March.`;
    const after = `Our summer range ${shared} ends in June.`;

    // Act
    const html = renderTextDiffs([{ field: 'description', before, after }]);

    // Assess
    expect(html).toContain('<del><span class="sr-only">removed: </span><bdi>spring</bdi></del>');
    expect(html).toContain('<ins><span class="sr-only">added: </span><bdi>summer</bdi></ins>');
    expect(html).toContain('<ins><span class="sr-only">added: </span><bdi>June</bdi></ins>');
    // 43 unchanged words (range, w0…w39, ends, in), eight kept on each side
    expect(text(html)).toContain(TEXTS.diffUnchanged(27));
    expect(text(html)).not.toContain('w20');
  });

  it('draws a hidden or bidi character as a marker, and escapes markup', () => {
    // Act
    const html = renderTextDiffs([
      { field: 'title', before: `${'a '.repeat(70)}old`, after: `${'a '.repeat(70)}<b>new\u202E</b>` },
    ]);

    // Assess
    expect(html).toContain('<span class="hidden-character">⟨U+202E⟩</span>');
    expect(html).toContain('&lt;b&gt;');
    expect(html).not.toContain('<b>');
  });

  it('stays bounded however much differs, and says so', () => {
    // Prepare: 8,000 characters with a change in every sentence, and a text rewritten throughout
    const sentence = (word: string) => `The quick brown fox jumps over the ${word} dog again. `;
    const before = Array.from({ length: 150 }, () => sentence('lazy')).join('');
    const after = Array.from({ length: 150 }, () => sentence('sleepy')).join('');

    // Act
    const scattered = renderTextDiffs([{ field: 'description', before, after }]);
    const rewritten = renderTextDiffs([
      { field: 'description', before: 'alpha '.repeat(1_300), after: 'omega '.repeat(1_300) },
    ]);

    // Assess
    // What the diff draws, beside the labels it says to a screen reader
    const drawn = text(scattered.replace(/<span class="sr-only">[^<]*<\/span>/g, ''));
    expect(drawn.length).toBeLessThan(1_700);
    expect(scattered).toContain(TEXTS.diffCut);
    expect(text(rewritten)).toContain(TEXTS.diffTooDifferent);
    expect(text(rewritten).length).toBeLessThan(200);
  });

  it('leaves a short change to the preview line, which shows it whole', () => {
    expect(renderTextDiffs([{ field: 'title', before: 'Offers', after: 'Spring' }])).toBe('');
  });
});
