import { excerptOf } from '../excerpt-text.js';
import type { PreviewTextChange } from '../tools/tool.js';

/** A preview keeps at most this many text changes (one per field a write sets, in practice). */
export const PREVIEW_MAX_CHANGES = 10;
/**
 * Each side of a change keeps at most this many characters (code points), cut with `…`: the
 * card's diff is excerpted further, and a sealed card stays far below a DynamoDB item.
 */
export const PREVIEW_CHANGE_MAX_CHARACTERS = 8_000;
const FIELD_MAX_CHARACTERS = 100;

/**
 * The text changes a preview returned, bounded before they are sealed: at most ten, each side
 * cut to 8,000 characters, a field name to 100, only changes that change something, anything
 * not a text change dropped. Costs what it keeps: a side is cut before it is copied.
 *
 * @example
 * boundPreviewChanges([{ field: 'description', before: 'Old', after: 'New' }, 'junk'])
 * // [{ field: 'description', before: 'Old', after: 'New' }]
 */
export function boundPreviewChanges(changes: unknown): PreviewTextChange[] {
  if (!Array.isArray(changes)) return [];
  const kept: PreviewTextChange[] = [];
  for (const change of changes.slice(0, PREVIEW_MAX_CHANGES * 4)) {
    if (kept.length === PREVIEW_MAX_CHANGES) break;
    const { field, before, after } = (change ?? {}) as Record<string, unknown>;
    if (typeof field !== 'string' || typeof before !== 'string' || typeof after !== 'string') continue;
    if (before === after) continue;
    kept.push({
      field: excerptOf(field.slice(0, FIELD_MAX_CHARACTERS * 4), FIELD_MAX_CHARACTERS),
      before: excerptOf(before.slice(0, PREVIEW_CHANGE_MAX_CHARACTERS * 4), PREVIEW_CHANGE_MAX_CHARACTERS),
      after: excerptOf(after.slice(0, PREVIEW_CHANGE_MAX_CHARACTERS * 4), PREVIEW_CHANGE_MAX_CHARACTERS),
    });
  }
  return kept;
}
