import type { TextDiff } from '../../core/previews/text-diff.js';
import { TEXTS } from '../../core/texts.js';
import { escapeHtml } from './escape-html.js';
import { showValue } from './show-value.js';

/**
 * A shown preview's word-level diffs (issue #21), as the pause computed them: removed and added
 * words marked (and said to a screen reader), the unchanged words between changes counted, a cut
 * said. Every word is untrusted text, marked and isolated like any value on a card.
 *
 * @example
 * renderTextDiffs(preview.diffs);
 */
export function renderTextDiffs(diffs: readonly TextDiff[] | undefined): string {
  return (diffs ?? []).map(renderTextDiff).join('');
}

function renderTextDiff(diff: TextDiff): string {
  const title = `<p class="diff-title">${escapeHtml(TEXTS.diffTitle)} ${showValue(diff.field)}</p>`;
  if (diff.tooDifferent)
    return `<div class="diff">${title}<p class="diff-cut">${escapeHtml(TEXTS.diffTooDifferent)}</p></div>`;
  const drawn = diff.parts.map(renderPart);
  const cut = diff.cut ? `<span class="diff-cut"> ${escapeHtml(TEXTS.diffCut)}</span>` : '';
  return `<div class="diff">${title}<p class="diff-text">${drawn.join('')}${cut}</p></div>`;
}

function renderPart(part: TextDiff['parts'][number]): string {
  if (part.kind === 'elided') {
    return `<span class="diff-elided"> ${escapeHtml(TEXTS.diffUnchanged(part.words))} </span>`;
  }
  if (part.kind === 'removed') {
    return `<del><span class="sr-only">${escapeHtml(TEXTS.diffRemoved)} </span>${showValue(part.text)}</del>`;
  }
  if (part.kind === 'added') {
    return `<ins><span class="sr-only">${escapeHtml(TEXTS.diffAdded)} </span>${showValue(part.text)}</ins>`;
  }
  return showValue(part.text);
}
