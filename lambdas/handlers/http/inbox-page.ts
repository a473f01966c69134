import { createHash } from 'node:crypto';
import type { PendingToolView } from '../../core/previews/build-pending-tools.js';
import type { InboxCard } from '../../core/runs/list-inbox.js';
import { TEXTS } from '../../core/texts.js';
import { escapeHtml } from './escape-html.js';

/**
 * The inbox page. GET / serves a shell with no data (a browser cannot send a bearer token on
 * navigation, and authentication is a bearer token, never a cookie); its script asks for the
 * token, then fetches the cards as server-rendered, escaped HTML from GET /inbox
 * (`Accept: text/html`) and posts decisions as JSON. Nothing acts on a GET.
 */
export function renderInboxPage(): string {
  return PAGE;
}

/** The cards as an HTML fragment: every value escaped, buttons carrying the digest. */
export function renderInboxCards(cards: readonly InboxCard[], cursor?: string): string {
  if (cards.length === 0) return '<p class="empty" data-state="empty">Nothing waits for your decision.</p>';
  const items = cards.map((card) => renderCard(card)).join('\n');
  const more = cursor
    ? `<button type="button" class="more" data-cursor="${escapeHtml(cursor)}">Older cards</button>`
    : '';
  return `${items}\n${more}`;
}

function renderCard(card: InboxCard): string {
  return `<article class="card" data-run-id="${escapeHtml(card.runId)}" data-digest="${escapeHtml(card.digest)}">
  <header><h2>${escapeHtml(card.label)}</h2>
  <p class="meta">Run <code>${escapeHtml(card.runId)}</code> by ${escapeHtml(card.owner)}, paused at
  <time datetime="${escapeHtml(card.pausedAt)}">${escapeHtml(card.pausedAt)}</time>, turn ${escapeHtml(card.turn)}.</p></header>
  <ol class="calls">${card.pendingTools.map((tool) => renderPendingTool(tool)).join('')}</ol>
  <label>Reason (optional) <input type="text" name="reason" maxlength="2000"></label>
  <div class="actions"><button type="button" class="approve">Approve</button>
  <button type="button" class="reject">Reject</button></div>
  <p class="status" role="status"></p>
</article>`;
}

/** One pending call; the same fields, in the same order, as the JSON `pendingTools` entry. */
export function renderPendingTool(tool: PendingToolView): string {
  const registered = tool.registered
    ? ''
    : ' <span class="warning">(this tool is no longer registered)</span>';
  return `<li class="call" data-index="${escapeHtml(tool.index)}" data-preview="${escapeHtml(tool.preview.status)}">
  <p><strong>${escapeHtml(tool.tool)}</strong>${registered}</p>
  <pre class="arguments">${escapeHtml(JSON.stringify(tool.arguments, null, 2))}</pre>
  ${renderPreview(tool.preview)}
</li>`;
}

function renderPreview(preview: PendingToolView['preview']): string {
  switch (preview.status) {
    case 'shown':
      return `<div class="preview"><ul>${preview.lines.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>
  <p class="caveat">${escapeHtml(preview.caveat)}</p></div>`;
    case 'failed':
      return `<div class="preview failed"><p><strong>${escapeHtml(preview.message)}</strong></p>
  <ul>${preview.lines.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul></div>`;
    case 'withheld':
      return `<div class="preview withheld"><p>${escapeHtml(preview.message)}</p></div>`;
    case 'none':
      return `<div class="preview none"><p>${escapeHtml(preview.message)}</p></div>`;
  }
}

const SCRIPT = `
const tokenKey = 'countersign.token';
const cardsElement = document.getElementById('cards');
const signIn = document.getElementById('sign-in');
const statusTexts = { 401: 'Your sign-in is not valid: paste a fresh token.', 403: null, 404: 'This run is gone.',
  409: ${JSON.stringify(TEXTS.staleDigest)}, 410: ${JSON.stringify(TEXTS.decisionExpired)} };
function token() { return sessionStorage.getItem(tokenKey) || ''; }
async function load(cursor) {
  if (!token()) { signIn.hidden = false; cardsElement.textContent = ''; return; }
  signIn.hidden = true;
  const url = '/inbox' + (cursor ? '?cursor=' + encodeURIComponent(cursor) : '');
  const response = await fetch(url, { headers: { authorization: 'Bearer ' + token(), accept: 'text/html' } });
  if (response.ok) { cardsElement.innerHTML = await response.text(); return; }
  const problem = await response.json().catch(() => ({}));
  cardsElement.innerHTML = '';
  const paragraph = document.createElement('p');
  paragraph.className = 'error';
  paragraph.dataset.status = String(response.status);
  paragraph.textContent = (problem.error && problem.error.message) || statusTexts[response.status] || 'The inbox could not be loaded.';
  cardsElement.append(paragraph);
  if (response.status === 401) { sessionStorage.removeItem(tokenKey); signIn.hidden = false; }
}
async function decide(card, decision) {
  const status = card.querySelector('.status');
  const reason = card.querySelector('input[name=reason]').value;
  const body = { digest: card.dataset.digest, decision };
  if (reason) body.reason = reason;
  const response = await fetch('/runs/' + encodeURIComponent(card.dataset.runId) + '/decision', {
    method: 'POST', headers: { authorization: 'Bearer ' + token(), 'content-type': 'application/json' },
    body: JSON.stringify(body) });
  const answer = await response.json().catch(() => ({}));
  card.dataset.outcome = String(response.status);
  status.textContent = response.ok
    ? (decision === 'approve' ? 'Approved: the run continues.' : 'Rejected: the model is told.')
    : ((answer.error && answer.error.message) || statusTexts[response.status] || 'The decision failed.');
  if (response.ok) card.querySelectorAll('button').forEach((button) => { button.disabled = true; });
}
document.getElementById('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(tokenKey, document.getElementById('token').value.trim());
  load();
});
document.getElementById('sign-out').addEventListener('click', () => { sessionStorage.removeItem(tokenKey); load(); });
cardsElement.addEventListener('click', (event) => {
  const button = event.target.closest('button');
  if (!button) return;
  if (button.classList.contains('more')) { load(button.dataset.cursor); return; }
  const card = button.closest('.card');
  if (card) decide(card, button.classList.contains('approve') ? 'approve' : 'reject');
});
load();
`;

const SCRIPT_HASH = createHash('sha256').update(SCRIPT).digest('base64');

/** Inline script and style only, pinned by hash: a value that slipped escaping still could not run. */
export const INBOX_PAGE_CSP = `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>countersign inbox</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1d1d1f; }
.card { border: 1px solid #c8c8cc; border-radius: 8px; padding: 1rem 1.25rem; margin: 1rem 0; }
.card h2 { margin: 0 0 .25rem; font-size: 1.1rem; } .meta { color: #555; margin: 0; }
pre.arguments { background: #f4f4f6; padding: .5rem; overflow-x: auto; white-space: pre-wrap; }
.preview { border-left: 3px solid #3a7bd5; padding-left: .75rem; } .preview.failed { border-color: #c0392b; }
.preview.withheld, .preview.none { border-color: #999; color: #555; } .caveat { font-size: .9em; color: #555; }
.warning, .error { color: #a0261b; } .actions button { margin-right: .5rem; }
</style></head>
<body><header><h1>Waiting for your decision</h1><button type="button" id="sign-out">Sign out</button></header>
<section id="sign-in" hidden><p>Paste your bearer token to sign in. It stays in this tab only.</p>
<form id="sign-in-form"><label>Bearer token <input id="token" type="password" autocomplete="off" required></label>
<button type="submit">Sign in</button></form></section>
<main id="cards" aria-live="polite"></main>
<script>${SCRIPT}</script></body></html>`;
