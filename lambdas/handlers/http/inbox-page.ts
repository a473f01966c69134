import type { PendingToolView } from '../../core/approvals/build-pending-tools.js';
import type { CardView } from '../../core/approvals/card-reader.js';
import type { UnopenableCard } from '../../core/approvals/unopenable-card.js';
import type { InboxEntry } from '../../core/runs/list-inbox.js';
import { TEXTS } from '../../core/texts.js';
import { escapeHtml } from './escape-html.js';
import { INBOX_PAGE_SCRIPT } from './inbox-page-script.js';
import { renderArguments } from './render-arguments.js';
import { showValue } from './show-value.js';

export { INBOX_PAGE_CSP } from './inbox-page-script.js';

/**
 * The inbox page. GET / serves a shell with no data (a browser cannot send a bearer token on
 * navigation, and authentication is a bearer token, never a cookie); its script asks for the
 * token, then fetches the cards as server-rendered, escaped HTML from GET /inbox
 * (`Accept: text/html`) and posts decisions as JSON. Nothing acts on a GET.
 */
export function renderInboxPage(): string {
  return PAGE;
}

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
  return `<article class="card" data-run-id="${escapeHtml(card.runId)}" data-digest="${escapeHtml(card.digest)}" data-expires-at="${escapeHtml(card.expiresAt)}" data-state="${closed ? 'closed' : 'waiting'}">
  <header><h2>${showValue(card.label)}</h2>
  <p class="meta">Run <code>${showValue(card.runId)}</code> by <strong>${showValue(card.owner)}</strong>, turn ${showValue(card.turn)}.</p>
  ${renderRouting(card)}<p class="times"><span class="paused">${escapeHtml(TEXTS.pausedAt)} ${renderTime(card.pausedAt)}</span>
  <span class="deadline">${escapeHtml(TEXTS.approvalWindowCloses)} ${renderTime(card.expiresAt)}</span></p></header>
  <ol class="calls">${card.pendingTools.map((tool) => renderPendingTool(tool, card.pendingTools.length > 1)).join('')}</ol>
  ${notice}${renderPolicy(card)}<div class="decision"><label>Reason (optional) <input type="text" name="reason" maxlength="2000"${disabled(closed)}></label>
  <div class="actions"><button type="button" class="approve"${disabled(closed || nothingRuns || card.approveRefusal !== undefined)}>Approve</button>
  <button type="button" class="reject"${disabled(closed)}>Reject</button></div></div>
  <p class="status" role="status"></p>
</article>`;
}

/**
 * A point in time: the server writes it in UTC; the page's script rewrites it in the viewer's
 * locale and time zone, relative and absolute ("in 6 days (7 Dec 2026, 21:03)").
 */
function renderTime(iso: string): string {
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
export function renderPendingTool(tool: PendingToolView, perCall = false): string {
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
function renderEdit(tool: PendingToolView): string {
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
function renderExcerptNote(tool: PendingToolView): string {
  if (!tool.argumentsExcerpt) return '';
  return `<p class="excerpt-note">${escapeHtml(TEXTS.argumentsExcerpted(tool.argumentsExcerpt.totalCharacters))}
  <button type="button" class="full-arguments">${escapeHtml(TEXTS.showFullArguments)}</button></p>
  `;
}

function renderPreview(preview: PendingToolView['preview']): string {
  switch (preview.status) {
    case 'shown':
      return `<div class="preview">${renderLines(preview.lines)}
  <p class="caveat">${escapeHtml(preview.caveat)}</p></div>`;
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

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>countersign inbox</title>
<style>
:root { color-scheme: light; --ink: #1d1d1f; --muted: #5a5a60; --line: #d2d2d7; --panel: #f5f5f7; }
body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: var(--ink); background: #fbfbfd; }
.top { display: flex; align-items: center; justify-content: space-between; gap: 1rem; max-width: 60rem;
  margin: 0 auto; padding: 1.25rem 1rem .5rem; }
.top h1 { font-size: 1.5rem; margin: 0; }
main, #sign-in { max-width: 60rem; margin: 0 auto; padding: 0 1rem 2rem; }
#sign-in-form { display: flex; gap: .5rem; align-items: end; flex-wrap: wrap; }
#sign-in-form label { display: flex; flex-direction: column; flex: 1 1 24rem; font-weight: 600; }
input[type=text], input[type=password] { font: inherit; padding: .45rem .6rem; border: 1px solid var(--line);
  border-radius: 6px; background: #fff; }
button { font: inherit; padding: .45rem 1rem; border-radius: 6px; border: 1px solid var(--line); background: #fff;
  color: var(--ink); cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
button.approve { background: #1f7a3d; border-color: #1f7a3d; color: #fff; font-weight: 600; }
button.reject { border-color: #b3261e; color: #b3261e; font-weight: 600; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 1rem 1.25rem; margin: 1rem 0;
  box-shadow: 0 1px 2px rgba(0,0,0,.04); }
.card.unopenable { border-color: #b3261e; background: #fdf3f2; }
.card h2 { margin: 0 0 .25rem; font-size: 1.15rem; } .meta { color: var(--muted); margin: 0; }
.calls { padding-left: 1.25rem; } .call { margin: .75rem 0; } .tool { margin: 0 0 .25rem; }
.label { margin: .5rem 0 .2rem; font-size: .8rem; font-weight: 600; text-transform: uppercase; letter-spacing: .04em;
  color: var(--muted); }
pre.arguments { background: var(--panel); border-radius: 6px; padding: .6rem .75rem; margin: 0; overflow-x: auto;
  white-space: pre-wrap; word-break: break-word; font-size: .9rem; }
.excerpt-note { margin: 0 0 .3rem; font-size: .9rem; color: var(--muted); }
pre.arguments button.cut { font: inherit; padding: 0 .3rem; border-radius: 4px; border-color: #3a7bd5; color: #1d4f91;
  background: #eef4fc; }
.preview { border-left: 4px solid #3a7bd5; background: #f3f7fd; border-radius: 0 6px 6px 0; padding: .4rem .75rem; }
.preview ul { margin: .2rem 0; padding-left: 1.1rem; } .preview li { word-break: break-word; }
.preview.failed { border-color: #b3261e; background: #fdf3f2; }
.preview.withheld, .preview.none { border-color: #8e8e93; background: var(--panel); color: var(--muted); }
.preview p { margin: .2rem 0; } .caveat { font-size: .85em; color: var(--muted); }
.decision { display: flex; gap: 1rem; align-items: end; flex-wrap: wrap; margin-top: .75rem; }
.decision label { display: flex; flex-direction: column; flex: 1 1 18rem; font-size: .9rem; color: var(--muted); }
.actions { display: flex; gap: .5rem; }
.status:empty { display: none; }
.status { margin: .75rem 0 0; padding: .5rem .75rem; border-radius: 6px; background: var(--panel); }
.card[data-state=decided] .status { background: #e8f5ec; color: #14532d; }
.card[data-state=stale] .status, .card[data-state=refused] .status, .card[data-state=throttled] .status {
  background: #fff4e5; color: #7a4100; }
.card[data-state=expired] .status, .card[data-state=gone] .status, .card[data-state=failed] .status {
  background: #fdf3f2; color: #8c1d18; }
.times { color: var(--muted); margin: .1rem 0 0; display: flex; gap: 1.25rem; flex-wrap: wrap; font-size: .9rem; }
.deadline { font-weight: 600; }
.hidden-character { background: #fff1c2; color: #7a4100; border-radius: 3px; padding: 0 .1em; font-family: ui-monospace, monospace; font-size: .85em; }
bdi { unicode-bidi: isolate; }
.preview.refused { border-color: #8e8e93; background: var(--panel); }
.notice { margin: .75rem 0 0; padding: .5rem .75rem; border-radius: 6px; background: #fff4e5; color: #7a4100; }
.card[data-state=closed] { opacity: .75; } .card[data-state=closed] .deadline { color: #8c1d18; }
.edited { border-left: 3px solid #b26a00; padding-left: .6rem; margin: .5rem 0; } .edited ul { margin: .2rem 0; padding-left: 1.2rem; }
.refuse-call { display: block; margin-top: .4rem; font-size: .9rem; }
.warning, .error, .record-changed, .effect-unconfirmed { color: #a0261b; } .empty { color: var(--muted); font-size: 1.05rem; padding: 2rem 0; }
</style></head>
<body><header class="top"><h1>Waiting for your decision</h1><button type="button" id="sign-out" hidden>Sign out</button></header>
<section id="sign-in" hidden><p>Paste your bearer token to sign in. It stays in this tab only.</p>
<form id="sign-in-form"><label>Bearer token <input id="token" type="password" autocomplete="off" required></label>
<button type="submit">Sign in</button></form></section>
<main id="cards" aria-live="polite"></main>
<script>${INBOX_PAGE_SCRIPT}</script></body></html>`;
