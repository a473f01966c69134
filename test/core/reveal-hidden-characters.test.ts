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
    // Issue #20 item 5: each of these passed unmarked, so a value could carry text the approver never saw.
    ['the variation selectors', '\uFE00\uFE0F\u{E0100}\u{E01EF}', '⟨U+FE00⟩⟨U+FE0F⟩⟨U+E0100⟩⟨U+E01EF⟩'],
    ['the combining grapheme joiner', '\u034F', '⟨U+034F⟩'],
    ['the Khmer inherent vowels', '\u17B4\u17B5', '⟨U+17B4⟩⟨U+17B5⟩'],
    [
      'the Mongolian free variation selectors',
      '\u180B\u180C\u180D\u180F',
      '⟨U+180B⟩⟨U+180C⟩⟨U+180D⟩⟨U+180F⟩',
    ],
    ['the other Hangul fillers', '\u115F\u1160\uFFA0', '⟨U+115F⟩⟨U+1160⟩⟨U+FFA0⟩'],
    ['the blank braille pattern', '\u2800', '⟨U+2800⟩'],
    ['private-use characters', '\uE000\u{F0000}\u{10FFFD}', '⟨U+E000⟩⟨U+F0000⟩⟨U+10FFFD⟩'],
    ['unassigned code points', '\u0378\u{E0080}\u{10FFFF}', '⟨U+0378⟩⟨U+E0080⟩⟨U+10FFFF⟩'],
    ['a lone surrogate of either half', '\uD800x\uDC00', '⟨U+D800⟩x⟨U+DC00⟩'],
  ])('marks %s', (_name, hidden, marked) => {
    expect(revealHiddenCharacters(`a${hidden}b`)).toBe(`a${marked}b`);
  });

  it('marks a code point by the property definition, for all 0x110000 of them', () => {
    // Prepare: the definition, one property at a time (docs/previews.md), apart from the code's one pattern.
    const hiddenBy = [
      /^\p{Default_Ignorable_Code_Point}$/u,
      /^\p{Cf}$/u,
      /^\p{Cc}$/u,
      /^\p{Co}$/u,
      /^\p{Cn}$/u,
      /^\p{Cs}$/u,
      /^\p{Zl}$/u,
      /^\p{Zp}$/u,
    ];
    const layout = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d]);
    const blankLooking = new Set([0x2800]);
    const wrong: string[] = [];

    // Act
    for (let codePoint = 0; codePoint < 0x110000; codePoint += 1) {
      const character = String.fromCodePoint(codePoint);
      const hidden =
        !layout.has(codePoint) &&
        (blankLooking.has(codePoint) || hiddenBy.some((property) => property.test(character)));
      const marker = `⟨U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}⟩`;
      const shown = revealHiddenCharacters(`a${character}b`);
      if (shown !== (hidden ? `a${marker}b` : `a${character}b`)) wrong.push(marker);
    }

    // Assess
    expect(wrong).toEqual([]);
  });

  it('marks a pair of surrogates once, as the code point it encodes', () => {
    // A tag character is the pair \uDB40\uDC41: one marker, never two halves.
    expect(revealHiddenCharacters('\uDB40\uDC41')).toBe('⟨U+E0041⟩');
    expect(revealHiddenCharacters('x\uDB40')).toBe('x⟨U+DB40⟩');
  });

  it('leaves visible text, layout whitespace and right-to-left letters alone, and is idempotent', () => {
    const text = 'Grüße\tשלום\n😀 x\u00A0€ 한국어 ﷺ 𝔘';
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
