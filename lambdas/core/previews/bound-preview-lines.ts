import { excerptOf } from '../excerpt-text.js';
import { revealHiddenCharacters } from '../reveal-hidden-characters.js';
import { TEXTS } from '../texts.js';

/** Seed 000: a preview is bounded before it is persisted: 20 lines, 500 characters each. */
export const PREVIEW_MAX_LINES = 20;
export const PREVIEW_MAX_LINE_CHARACTERS = 500;
/**
 * How much of one raw line is read at all. Cut BEFORE whitespace is collapsed, so a
 * 10,000-character line costs what is kept, not what was given (issue #9): room for a line
 * that collapses (indentation, runs of spaces) while keeping the work per line constant.
 */
export const PREVIEW_RAW_LINE_MAX_LENGTH = PREVIEW_MAX_LINE_CHARACTERS * 4;
/** How many entries are read looking for 20 non-blank lines; the rest is counted, not read. */
export const PREVIEW_MAX_WALKED_LINES = 1_000;

/**
 * Collapses whitespace, shows hidden and bidi characters as visible markers (`⟨U+202E⟩`), caps
 * each line at 500 characters and the list at 20 lines; a cut list ends with a line saying how
 * many entries were not shown.
 *
 * Costs what it keeps: it stops walking once 20 lines are kept (or after
 * {@link PREVIEW_MAX_WALKED_LINES} entries) and reads at most {@link PREVIEW_RAW_LINE_MAX_LENGTH}
 * code units of any line, so 100,000 lines of 10,000 characters are trimmed as fast as 21 short
 * ones.
 *
 * @example
 * boundPreviewLines(['a\n\n b']) // ['a b']
 * boundPreviewLines(['\u200B']) // ['⟨U+200B⟩']
 */
export function boundPreviewLines(lines: readonly unknown[]): string[] {
  const kept: Array<{ text: string; end: number }> = [];
  let position = 0;
  const walkLimit = Math.min(lines.length, PREVIEW_MAX_WALKED_LINES);
  // One line more than shown, to know whether the last slot is a line or the "more" line.
  while (position < walkLimit && kept.length <= PREVIEW_MAX_LINES) {
    const text = boundLine(lines[position]);
    position += 1;
    if (text.length > 0) kept.push({ text, end: position });
  }
  if (kept.length <= PREVIEW_MAX_LINES && position >= lines.length) return kept.map((line) => line.text);
  // Entries after the last line shown, counted without reading them (blank ones included).
  const shown = kept.slice(0, PREVIEW_MAX_LINES - 1);
  const hidden = lines.length - (shown.at(-1)?.end ?? 0);
  return [...shown.map((line) => line.text), TEXTS.previewMoreLines(hidden)];
}

function boundLine(line: unknown): string {
  const text = typeof line === 'string' ? line : isPrimitive(line) ? String(line) : '';
  const cut = text.length > PREVIEW_RAW_LINE_MAX_LENGTH;
  // A cut may split a surrogate pair; its lone half would draw as a replacement character.
  const read = cut ? text.slice(0, PREVIEW_RAW_LINE_MAX_LENGTH).replace(/[\uD800-\uDBFF]$/, '') : text;
  const collapsed = revealHiddenCharacters(read).replace(/\s+/g, ' ').trim();
  if (collapsed.length === 0) return '';
  return excerptOf(cut ? `${collapsed}…` : collapsed, PREVIEW_MAX_LINE_CHARACTERS);
}

function isPrimitive(value: unknown): boolean {
  return typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint';
}
