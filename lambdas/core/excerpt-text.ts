/**
 * Cuts `text` to at most `maxCharacters` characters (code points, so an emoji is never split),
 * ending in `…` when it was cut; never inside a hidden-character marker (`⟨U+202E⟩`), which
 * would then read as text. The one excerpt of a string: previews, page tools and cards read
 * the same.
 *
 * @example
 * excerptOf('Spring sale on everything', 10) // 'Spring sa…'
 */
export function excerptOf(text: string, maxCharacters: number): string {
  const characters = Array.from(text);
  if (characters.length <= maxCharacters) return text;
  const kept = characters.slice(0, Math.max(0, maxCharacters - 1)).join('');
  const partialMarker = /⟨[U+0-9A-F]{0,8}$/.exec(kept);
  return `${partialMarker ? kept.slice(0, partialMarker.index) : kept}…`;
}
