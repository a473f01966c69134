import type { CardCallView } from '../../core/approvals/build-card-call-views.js';
import type { CardView } from '../../core/approvals/card-reader.js';
import type { UnopenableCard } from '../../core/approvals/unopenable-card.js';
import type { InboxEntry } from '../../core/runs/list-inbox.js';
import { TEXTS } from '../../core/texts.js';
import { escapeHtml } from './escape-html.js';
import { renderArguments } from './render-arguments.js';
import {
  blindWarningId,
  isBlindApproval,
  renderBlindApprovalWarning,
  renderCardContext,
  renderOwner,
} from './render-card-context.js';
import { renderTextDiffs } from './render-text-diff.js';
import { showValue } from './show-value.js';

// The page's shell and script are inbox-page-shell.ts; this file draws the cards it shows.

/**
 * The cards as an HTML fragment: every value escaped, its hidden and bidi characters drawn as
 * markers and isolated in a `<bdi>`, buttons carrying the digest. `now` decides which cards
 * are shown closed (the page's script re-checks with the viewer's clock). A card that cannot
 * be opened is drawn as its flagged placeholder.
 */
export function renderInboxCards(
  cards: readonly InboxEntry[],
  cursor?: string,
  now: Date = new Date(),
): string {
  if (cards.length === 0) return '<p class="empty" data-state="empty">Nothing waits for your decision.</p>';
  const items = cards
    .map((card) => ('unopenable' in card ? renderUnopenableCard(card) : renderCard(card, now)))
    .join('\n');
  const more = cursor
    ? `<button type="button" class="more" data-cursor="${escapeHtml(cursor)}">Older cards</button>`
    : '';
  return `${items}\n${more}`;
}

/** Which approver groups the card went to: each group one isolated, marked value. */
function renderRouting(card: CardView): string {
  const groups = card.approverGroups ?? [];
  const shown =
    groups.length === 0 ? escapeHtml(TEXTS.routedToEveryApprover) : groups.map(showValue).join(', ');
  return `<p class="routed">${escapeHtml(TEXTS.routedTo)} ${shown}</p>
  `;
}

/** One card of the page (also how GET /inbox measures a page's HTML against its byte bound). */
export function renderCard(card: CardView, now: Date): string {
  const closed = now.getTime() >= Date.parse(card.expiresAt);
  const nothingRuns = card.pendingTools.every((tool) => !tool.willRun);
  const notice = closed
    ? `<p class="notice closed">${escapeHtml(TEXTS.approvalWindowClosed)}</p>`
    : nothingRuns
      ? `<p class="notice nothing-runs">${escapeHtml(TEXTS.nothingToApprove)}</p>`
      : '';
  const disabled = (off: boolean) => (off ? ' disabled' : '');
  const approveOff = closed || nothingRuns || card.approveRefusal !== undefined;
  // Approving a write whose preview the read gate withholds says so on the button and beside it.
  const blind = !approveOff && isBlindApproval(card);
  const approve = blind
    ? `<button type="button" class="approve" aria-describedby="${escapeHtml(blindWarningId(card))}">${escapeHtml(TEXTS.approveWithoutPreviewButton)}</button>`
    : `<button type="button" class="approve"${disabled(approveOff)}>Approve</button>`;
  return `<article class="card" data-run-id="${escapeHtml(card.runId)}" data-digest="${escapeHtml(card.digest)}" data-expires-at="${escapeHtml(card.expiresAt)}" data-state="${closed ? 'closed' : 'waiting'}">
  <header><h2>${showValue(card.label)}</h2>
  <p class="meta">Run <code>${showValue(card.runId)}</code> by ${renderOwner(card)}, turn ${showValue(card.turn)}.</p>
  ${renderRouting(card)}<p class="times"><span class="paused">${escapeHtml(TEXTS.pausedAt)} ${renderTime(card.pausedAt)}</span>
  <span class="deadline">${escapeHtml(TEXTS.approvalWindowCloses)} ${renderTime(card.expiresAt)}</span></p></header>
  ${renderCardContext(card.context)}<ol class="calls">${card.pendingTools.map((tool) => renderCardCall(tool, card.pendingTools.length > 1)).join('')}</ol>
  ${notice}${renderPolicy(card)}${blind ? renderBlindApprovalWarning(card) : ''}<div class="decision"><label>Reason (optional) <input type="text" name="reason" maxlength="2000"${disabled(closed)}></label>
  <div class="actions">${approve}
  <button type="button" class="reject"${disabled(closed)}>Reject</button></div></div>
  <p class="status" role="status"></p>
</article>`;
}

/**
 * A point in time: the server writes it in UTC; the page's script rewrites it in the viewer's
 * locale and time zone, relative and absolute ("in 6 days (7 Dec 2026, 21:03)").
 */
export function renderTime(iso: string): string {
  const at = new Date(iso);
  const fallback = Number.isNaN(at.getTime())
    ? iso
    : `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return `<time datetime="${escapeHtml(iso)}" data-when="${escapeHtml(iso)}">${showValue(fallback)}</time>`;
}

/** The flagged placeholder of a card that cannot be opened: no digest, so nothing to approve. */
function renderUnopenableCard(card: UnopenableCard): string {
  return `<article class="card unopenable" data-run-id="${escapeHtml(card.runId)}" data-state="unopenable">
  <header><p class="meta">Run <code>${showValue(card.runId)}</code></p></header>
  <p class="error" role="alert"><strong>${escapeHtml(card.message)}</strong></p>
</article>`;
}

/**
 * The k-of-n tally and, when this viewer may not approve, why (Reject stays enabled). Approver
 * ids are values like any other: isolated and with hidden characters marked.
 */
function renderPolicy(card: CardView): string {
  const approvals = card.approvals
    ? `<p class="approvals" data-count="${escapeHtml(card.approvals.count)}" data-required="${escapeHtml(card.approvals.required)}">${TEXTS.approvalProgress(card.approvals.count, card.approvals.required, card.approvals.approvedBy.map(showValue), (card.approvals.lapsedApprovers ?? []).map(showValue))}</p>\n  `
    : '';
  const refusal =
    card.approveRefusal === undefined
      ? ''
      : `<p class="approve-refusal" role="note">${escapeHtml(card.approveRefusal)}</p>\n  `;
  return `${approvals}${refusal}`;
}

/**
 * One pending call; the same fields, in the same order, as the JSON `pendingTools` entry. On a
 * card of several calls (`perCall`), a call can be refused while the others are approved.
 */
export function renderCardCall(tool: CardCallView, perCall = false): string {
  const warning = !tool.registered
    ? ` <span class="warning">${escapeHtml(TEXTS.toolNotRegistered)}</span>`
    : tool.willRun
      ? ''
      : ` <span class="warning">${escapeHtml(TEXTS.callWillNotRun)}</span>`;
  return `<li class="call" data-index="${escapeHtml(tool.index)}" data-preview="${escapeHtml(tool.preview.status)}" data-will-run="${tool.willRun}">
  <p class="tool"><strong>${showValue(tool.tool)}</strong>${warning}</p>
  ${tool.recordChanged ? `<p class="record-changed" role="alert">${escapeHtml(tool.recordChanged)}</p>\n  ` : ''}${tool.effectUnconfirmed ? `<p class="effect-unconfirmed" role="alert">${escapeHtml(tool.effectUnconfirmed)}</p>\n  ` : ''}<p class="label">Arguments</p>
  ${renderExcerptNote(tool)}<pre class="arguments" data-arguments="${tool.argumentsExcerpt ? 'excerpt' : 'exact'}">${renderArguments(tool.arguments, tool.argumentsExcerpt?.cuts)}</pre>
  <p class="label">What it would change</p>
  ${renderPreview(tool.preview)}${renderEdit(tool)}${perCall ? `\n  <label class="refuse-call"><input type="checkbox" name="refuse" value="${escapeHtml(tool.index)}"> ${escapeHtml(TEXTS.pageRefuseCall)}</label>` : ''}
</li>`;
}

/** An approver's edit of the call: who, and each change against the model's proposal. */
function renderEdit(tool: CardCallView): string {
  if (!tool.edited) return '';
  const changes = tool.edited.changes.map((change) => {
    const path = showValue(change.path.join('.') || '(all)');
    const before = 'before' in change ? showValue(JSON.stringify(change.before)) : '';
    const after = 'after' in change ? showValue(JSON.stringify(change.after)) : '';
    return `<li data-kind="${escapeHtml(change.kind)}"><code>${path}</code>: ${before}${before && after ? ' → ' : ''}${after}</li>`;
  });
  const more = tool.edited.more > 0 ? `<li>${escapeHtml(TEXTS.pageMoreChanges(tool.edited.more))}</li>` : '';
  return `
  <div class="edited" role="note"><p><strong>${showValue(tool.edited.note)}</strong></p><ul class="changes">${changes.join('')}${more}</ul></div>`;
}

/** Above excerpted arguments: the full size, and the one request that loads them whole. */
function renderExcerptNote(tool: CardCallView): string {
  if (!tool.argumentsExcerpt) return '';
  return `<p class="excerpt-note">${escapeHtml(TEXTS.argumentsExcerpted(tool.argumentsExcerpt.totalCharacters))}
  <button type="button" class="full-arguments">${escapeHtml(TEXTS.showFullArguments)}</button></p>
  `;
}

function renderPreview(preview: CardCallView['preview']): string {
  switch (preview.status) {
    case 'shown':
      // The caller's lines are flagged before they are read, not only in the caveat after them.
      return preview.suppliedBy === 'caller'
        ? `<div class="preview supplied-by-caller"><p class="caveat" role="note"><strong>${escapeHtml(preview.caveat)}</strong></p>
  ${renderLines(preview.lines)}</div>`
        : `<div class="preview">${renderLines(preview.lines)}
  ${renderTextDiffs(preview.diffs)}<p class="caveat">${escapeHtml(preview.caveat)}</p></div>`;
    case 'refused':
      return `<div class="preview refused">${renderLines(preview.lines)}</div>`;
    case 'failed':
      return `<div class="preview failed"><p><strong>${escapeHtml(preview.message)}</strong></p>
  ${renderLines(preview.lines)}</div>`;
    case 'withheld':
      return `<div class="preview withheld"><p>${escapeHtml(preview.message)}</p></div>`;
    case 'none':
      return `<div class="preview none"><p>${escapeHtml(preview.message)}</p></div>`;
  }
}

function renderLines(lines: readonly string[]): string {
  return `<ul>${lines.map((line) => `<li>${showValue(line)}</li>`).join('')}</ul>`;
}
