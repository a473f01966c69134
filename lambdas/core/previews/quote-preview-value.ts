import { excerptOf } from '../excerpt-text.js';

/** Seed 000: a preview shows only the fields the call would write, each a 120-character excerpt. */
export const PREVIEW_VALUE_MAX_CHARACTERS = 120;

/**
 * A value on a preview line, so it cannot imitate the line around it: its excerpt between
 * double quotes, with quotes, backslashes, line breaks and other control characters escaped
 * as a JSON string escapes them. A value holding `" → "x"` or a newline then reads as part of
 * one quoted value on every surface (inbox JSON, page, run view, stream), never as another
 * field, another arrow or a summary line. `(empty)` stands for the empty string; no value
 * shows as that, since every value is quoted. The one way preview values are written: the
 * built-in tools use it and team tools import it from `countersign/tools`.
 *
 * @example
 * quotePreviewValue('Spring sale'); // '"Spring sale"'
 * quotePreviewValue('a" → "b\nkeywords: x'); // '"a\\" → \\"b\\nkeywords: x"'
 */
export function quotePreviewValue(value: string, maxCharacters = PREVIEW_VALUE_MAX_CHARACTERS): string {
  return value === '' ? '(empty)' : JSON.stringify(excerptOf(value, maxCharacters));
}
