import { describe, expect, it } from 'vitest';
import { boundPreviewLines } from '../../lambdas/core/previews/bound-preview-lines.js';
import { revealHiddenCharacters } from '../../lambdas/core/reveal-hidden-characters.js';

describe('revealHiddenCharacters', () => {
  it.each([
    ['right-to-left override', '\u202E', '⟨U+202E⟩'],
    ['every bidi embedding and override', '\u202A\u202B\u202C\u202D', '⟨U+202A⟩⟨U+202B⟩⟨U+202C⟩⟨U+202D⟩'],
    ['the bidi isolates', '\u2066\u2067\u2068\u2069', '⟨U+2066⟩⟨U+2067⟩⟨U+2068⟩⟨U+2069⟩'],
    ['the directional marks', '\u200E\u200F\u061C', '⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩'],
    ['zero-width characters', '\u200B\u200C\u200D\u2060\uFEFF', '⟨U+200B⟩⟨U+200C⟩⟨U+200D⟩⟨U+2060⟩⟨U+FEFF⟩'],
    ['other format and control characters', '\u00AD\u0000\u007F\u0085', '⟨U+00AD⟩⟨U+0000⟩⟨U+007F⟩⟨U+0085⟩'],
    ['a tag character outside the BMP', '\u{E0041}', '⟨U+E0041⟩'],
    ['the line and paragraph separators', '\u2028\u2029', '⟨U+2028⟩⟨U+2029⟩'],
    ['a Hangul filler that draws as nothing', '\u3164', '⟨U+3164⟩'],
  ])('marks %s', (_name, hidden, marked) => {
    expect(revealHiddenCharacters(`a${hidden}b`)).toBe(`a${marked}b`);
  });

  it('leaves visible text, layout whitespace and right-to-left letters alone, and is idempotent', () => {
    const text = 'Grüße\tשלום\n😀 x';
    expect(revealHiddenCharacters(text)).toBe(text);
    const once = revealHiddenCharacters('Old \u202E tail');
    expect(revealHiddenCharacters(once)).toBe(once);
  });
});

describe('boundPreviewLines with hidden characters', () => {
  it('keeps a line made only of invisible characters as visible markers, never as a blank', () => {
    expect(boundPreviewLines(['\u200B\u200D\uFEFF', 'next'])).toEqual(['⟨U+200B⟩⟨U+200D⟩⟨U+FEFF⟩', 'next']);
  });

  it('marks a right-to-left override inside a preview line', () => {
    expect(boundPreviewLines(['description: "Old text \u202E tail" → "New text"'])).toEqual([
      'description: "Old text ⟨U+202E⟩ tail" → "New text"',
    ]);
  });

  it('never cuts a line inside a marker', () => {
    const [line] = boundPreviewLines([`${'x'.repeat(495)}\u202E\u202E`]);
    expect(line).toBe(`${'x'.repeat(495)}…`);
  });

  it('caps a line before collapsing its whitespace, and says it was cut', () => {
    const [line] = boundPreviewLines([`a${' '.repeat(5_000)}hidden after the cap`]);
    expect(line).toBe('a…');
  });
});
