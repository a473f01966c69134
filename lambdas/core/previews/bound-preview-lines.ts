/** Seed 000: a preview is bounded before it is persisted: 20 lines, 500 characters each. */
export const PREVIEW_MAX_LINES = 20;
export const PREVIEW_MAX_LINE_CHARACTERS = 500;

/**
 * Collapses whitespace, caps each line at 500 characters and the list at 20 lines; a cut
 * list ends with a line saying how many lines were not shown.
 *
 * @example
 * boundPreviewLines(['a\n\n b']) // ['a b']
 */
export function boundPreviewLines(lines: readonly unknown[]): string[] {
  const collapsed = lines
    .map((line) => (typeof line === 'string' ? line : String(line)).replace(/\s+/g, ' ').trim())
    .filter((line) => line.length > 0)
    .map((line) => truncate(line, PREVIEW_MAX_LINE_CHARACTERS));
  if (collapsed.length <= PREVIEW_MAX_LINES) return collapsed;
  const kept = collapsed.slice(0, PREVIEW_MAX_LINES - 1);
  const hidden = collapsed.length - kept.length;
  return [...kept, `… ${hidden} more line${hidden === 1 ? '' : 's'} not shown.`];
}

/** Cuts text to `limit` characters (code points), ending in `…` when cut. */
export function truncate(text: string, limit: number): string {
  const characters = Array.from(text);
  if (characters.length <= limit) return text;
  return `${characters.slice(0, limit - 1).join('')}…`;
}
