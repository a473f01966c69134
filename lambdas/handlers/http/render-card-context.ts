import type { ContextText } from '../../core/approvals/card-context.js';
import type { CardContextView, CardView } from '../../core/approvals/card-reader.js';
import { TEXTS } from '../../core/texts.js';
import { escapeHtml } from './escape-html.js';
import { showValue } from './show-value.js';

/**
 * Who started the run, as the card names them: their display name beside their id when the
 * card recorded it. Both are values like any other: marked and isolated.
 */
export function renderOwner(card: Pick<CardView, 'owner' | 'context'>): string {
  const name = card.context?.ownerName;
  if (!name) return `<strong>${showValue(card.owner)}</strong>`;
  return `<strong>${showValue(name)}</strong> (<code>${showValue(card.owner)}</code>)`;
}

/**
 * What a reviewer reads beside the calls (issue #21): the request that started the run and the
 * model's own text in the turn that proposed them, each an untrusted text in its own block, its
 * cut said; or why they are withheld from this viewer.
 */
export function renderCardContext(context: CardContextView | undefined): string {
  if (!context) return '';
  if (context.withheld) return `<p class="notice context-withheld">${escapeHtml(context.withheld)}</p>\n  `;
  const blocks = [
    context.request ? renderText('request', TEXTS.contextRequest, context.request) : '',
    context.reasoning ? renderText('reasoning', TEXTS.contextReasoning, context.reasoning) : '',
  ].join('');
  return blocks ? `<div class="context">${blocks}</div>\n  ` : '';
}

function renderText(kind: string, label: string, text: ContextText): string {
  const shown = Array.from(text.text).length;
  const cut =
    text.totalCharacters > shown
      ? ` <span class="cut-note">${escapeHtml(TEXTS.contextCut(text.totalCharacters))}</span>`
      : '';
  return `<p class="label">${escapeHtml(label)}</p><blockquote class="${kind}"><p>${showValue(text.text)}${cut}</p></blockquote>`;
}

/**
 * Whether approving releases a write whose preview this viewer may not read (the read gate
 * withheld it): Approve then says so, and a warning tells what is not seen.
 */
export function isBlindApproval(card: Pick<CardView, 'pendingTools'>): boolean {
  return card.pendingTools.some((tool) => tool.requiresApproval && tool.preview.status === 'withheld');
}

/** The warning above Approve on such a card; the button names it (`aria-describedby`). */
export function renderBlindApprovalWarning(card: Pick<CardView, 'runId'>): string {
  return `<p class="approve-warning" id="${escapeHtml(blindWarningId(card))}" role="note">${escapeHtml(TEXTS.approveWithoutPreview)}</p>\n  `;
}

export function blindWarningId(card: Pick<CardView, 'runId'>): string {
  return `approve-warning-${card.runId}`;
}
