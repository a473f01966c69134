import type { CallPreview } from '../approvals/pending-call.js';
import { boundPreviewLines, PREVIEW_MAX_LINE_CHARACTERS } from '../previews/bound-preview-lines.js';
import { quotePreviewValue } from '../previews/quote-preview-value.js';

/**
 * A caller's preview lines as the card keeps them: each line is one quoted value (so it cannot
 * imitate a line of ours: a failure, a cut, a field), then bounded and marked like every preview
 * (20 lines, 500 characters, hidden and bidi characters as markers). The card flags them as
 * supplied by the caller (`approvals/build-card-call-views.ts`).
 *
 * @example
 * boundCallerPreview(['Send invoice INV-7 to ana@example.com']); // ['"Send invoice INV-7 to ana@example.com"']
 */
export function boundCallerPreview(lines: readonly string[]): string[] {
  return boundPreviewLines(lines.map((line) => quotePreviewValue(line, PREVIEW_MAX_LINE_CHARACTERS - 2)));
}

/**
 * The pending calls with the caller's lines as their previews, by call index; a call without
 * lines has no preview (the card says the approver decides without one), nor has a call an
 * approver edited: the lines were computed for the caller's own arguments.
 *
 * @example
 * const onCard = withCallerPreviews(calls, state.external.callerPreviews);
 */
export function withCallerPreviews<Call extends { index: number; edited?: unknown }>(
  calls: readonly Call[],
  previews: ReadonlyArray<{ index: number; lines: string[] }>,
): Array<Call & { preview?: CallPreview }> {
  const byIndex = new Map(previews.map((preview) => [preview.index, preview.lines]));
  return calls.map((call) => {
    const lines = call.edited === undefined ? byIndex.get(call.index) : undefined;
    return lines === undefined || lines.length === 0 ? call : { ...call, preview: { lines, failed: false } };
  });
}
