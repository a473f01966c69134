/**
 * Characters that reorder or hide the text around them (the trojan-source class): bidi
 * embeddings, overrides, isolates and marks (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F,
 * U+061C), zero-width characters (U+200B–U+200D, U+2060, U+FEFF), every other format (Cf) and
 * control (Cc) character, the line and paragraph separators (U+2028/U+2029, which end a bidi
 * paragraph) and the Hangul fillers that draw as nothing. Tab, line feed, vertical tab, form
 * feed and carriage return are left alone: they are visible layout, and callers that show one
 * line collapse them.
 */
const HIDDEN_CHARACTER = /(?![\t\n\v\f\r])[\p{Cc}\p{Cf}\u2028\u2029\u115F\u1160\u3164\uFFA0]/gu;

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
