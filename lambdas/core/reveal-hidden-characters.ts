/**
 * Characters an approver could not see, or that reorder the text around them (the
 * trojan-source class), named by Unicode properties so the engine's Unicode data decides, not a
 * hand list: every default-ignorable code point (variation selectors, tag characters, U+034F,
 * U+17B4/5, U+180B–180F, the Hangul fillers), every format (Cf: bidi controls, zero-width
 * characters) and control (Cc) character, private-use (Co), unassigned (Cn) and lone surrogate
 * (Cs) code points, and the line and paragraph separators (Zl, Zp: they end a bidi paragraph).
 * U+2800 BRAILLE PATTERN BLANK is added by hand: a graphic character that draws as nothing.
 * Tab, line feed, vertical tab, form feed and carriage return are left alone: they are visible
 * layout, and callers that show one line collapse them.
 */
const HIDDEN_CHARACTER =
  /(?![\t\n\v\f\r])[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\u2800]/gu;

/**
 * Draws every character that could reorder or hide the text around it as a visible marker,
 * `⟨U+202E⟩`, so an approver reads a value in its logical order and sees what it hides. Every
 * value shown to a person for a decision goes through this; JSON bodies keep exact values.
 * Idempotent: a marker is made of visible characters only.
 *
 * @example
 * revealHiddenCharacters('Old \u202Etext') // 'Old ⟨U+202E⟩text'
 */
export function revealHiddenCharacters(value: string): string {
  return value.replace(HIDDEN_CHARACTER, markerOf);
}

function markerOf(character: string): string {
  const codePoint = character.codePointAt(0) ?? 0;
  return `⟨U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}⟩`;
}
