import { describe, expect, it } from 'vitest';
import { excerptOf } from '../../../lambdas/core/excerpt-text.js';
import { boundPreviewLines } from '../../../lambdas/core/previews/bound-preview-lines.js';

describe('boundPreviewLines', () => {
  it('collapses whitespace and drops blank lines', () => {
    expect(boundPreviewLines(['  a \n\t b  ', '   ', 'c'])).toEqual(['a b', 'c']);
  });

  it('caps an oversized preview at 20 lines, the last saying how many were not shown', () => {
    // Prepare
    const lines = Array.from({ length: 45 }, (_, index) => `line ${index}`);

    // Act
    const bounded = boundPreviewLines(lines);

    // Assess
    expect(bounded).toHaveLength(20);
    expect(bounded[18]).toBe('line 18');
    expect(bounded[19]).toBe('… 26 more lines not shown.');
  });

  it('caps each line at 500 characters ending in an ellipsis', () => {
    const [line] = boundPreviewLines(['x'.repeat(2000)]);
    expect(line).toHaveLength(500);
    expect(line?.endsWith('…')).toBe(true);
  });

  it('truncates by characters, not UTF-16 units', () => {
    expect(excerptOf('😀😀😀😀', 3)).toBe('😀😀…');
    expect(excerptOf('short', 10)).toBe('short');
    // Never half a hidden-character marker: it would read as text.
    expect(excerptOf('ab⟨U+202E⟩cd', 5)).toBe('ab…');
  });
});
