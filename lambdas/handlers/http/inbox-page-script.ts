import { createHash } from 'node:crypto';
import { routeTableOf } from '../../contract/api-client.js';
import { TEXTS } from '../../core/texts.js';

/** The routes the page's script calls, methods and paths read from the route manifest (never written twice). */
const PAGE_ROUTES = routeTableOf(['listInbox', 'getCall', 'decideRun']);

/** The page's one script: sign-in, the cards, full arguments and decisions. */
export const INBOX_PAGE_SCRIPT = `
const tokenKey = 'countersign.token';
const routes = ${JSON.stringify(PAGE_ROUTES)};
// One request of the API by its operationId, with the viewer's token: the page's only fetch.
function callApi(operationId, parameters, options) {
  const route = routes[operationId];
  const path = route.path.replace(/[{]([A-Za-z]+)[}]/g, (_match, name) => encodeURIComponent(parameters[name]));
  const query = options.query ? '?' + new URLSearchParams(options.query) : '';
  const headers = Object.assign({ authorization: 'Bearer ' + token() }, options.headers);
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(path + query, { method: route.method, headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body) });
}
const cardsElement = document.getElementById('cards');
const signIn = document.getElementById('sign-in');
const signOut = document.getElementById('sign-out');
const statusTexts = { 401: ${JSON.stringify(TEXTS.pageSignInInvalid)}, 403: null, 404: ${JSON.stringify(TEXTS.pageRunGone)},
  409: ${JSON.stringify(TEXTS.staleDigest)}, 410: ${JSON.stringify(TEXTS.decisionExpired)},
  429: ${JSON.stringify(TEXTS.tooManyRequests)} };
// Throttled (API Gateway answers 429 with its own body): always the same advice, nothing is lost.
function problemText(response, problem, fallback) {
  if (response.status === 429) return statusTexts[429];
  return (problem.error && problem.error.message) || statusTexts[response.status] || fallback;
}
function token() { return sessionStorage.getItem(tokenKey) || ''; }
async function load(cursor) {
  signOut.hidden = !token();
  if (!token()) { signIn.hidden = false; cardsElement.textContent = ''; return; }
  signIn.hidden = true;
  const response = await callApi('listInbox', {},
    { query: cursor ? { cursor } : undefined, headers: { accept: 'text/html' } });
  if (response.ok) { cardsElement.innerHTML = await response.text(); showTimes(); return; }
  const problem = await response.json().catch(() => ({}));
  cardsElement.innerHTML = '';
  const paragraph = document.createElement('p');
  paragraph.className = 'error';
  paragraph.dataset.status = String(response.status);
  paragraph.textContent = problemText(response, problem, ${JSON.stringify(TEXTS.pageInboxFailed)});
  cardsElement.append(paragraph);
  if (response.status === 401) { sessionStorage.removeItem(tokenKey); signIn.hidden = false; }
}
// Times in the viewer's locale and zone, relative and absolute; a card whose window passed closes.
function describeRelative(format, deltaMs) {
  const units = [['day', 86400000], ['hour', 3600000], ['minute', 60000]];
  for (const [unit, size] of units) {
    if (Math.abs(deltaMs) >= size) return format.format(Math.round(deltaMs / size), unit);
  }
  return format.format(Math.round(deltaMs / 1000), 'second');
}
function showTimes() {
  const now = Date.now();
  const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  cardsElement.querySelectorAll('time[data-when]').forEach((element) => {
    const at = Date.parse(element.dataset.when);
    if (Number.isNaN(at)) return;
    element.textContent = describeRelative(relative, at - now) + ' (' + absolute.format(at) + ')';
    element.title = new Date(at).toISOString();
  });
  cardsElement.querySelectorAll('.card[data-state=waiting]').forEach((card) => {
    if (Date.parse(card.dataset.expiresAt) <= now) closeCard(card);
  });
}
function closeCard(card) {
  card.dataset.state = 'closed';
  card.querySelectorAll('.decision button, .decision input, input[name=refuse]').forEach((control) => { control.disabled = true; });
  if (card.querySelector('.notice.closed')) return;
  const notice = document.createElement('p');
  notice.className = 'notice closed';
  notice.textContent = ${JSON.stringify(TEXTS.approvalWindowClosed)};
  card.querySelector('.decision').before(notice);
}
setInterval(showTimes, 30000);
async function showFullArguments(call, card) {
  const note = call.querySelector('.excerpt-note');
  call.querySelectorAll('.arguments-error').forEach((element) => element.remove());
  call.querySelectorAll('button.full-arguments').forEach((button) => { button.disabled = true; });
  const response = await callApi('getCall', { id: card.dataset.runId, index: call.dataset.index },
    { headers: { accept: 'text/html' } });
  const holder = document.createElement('div');
  if (response.ok) holder.innerHTML = await response.text();
  const full = holder.querySelector('pre.arguments');
  // Arguments of another turn must never stand on this card: its digest is what a decision names.
  if (full && full.dataset.digest === card.dataset.digest) {
    call.querySelector('pre.arguments').replaceWith(full);
    if (note) note.remove();
    return;
  }
  const problem = response.ok ? {} : await response.json().catch(() => ({}));
  const message = document.createElement('p');
  message.className = 'error arguments-error';
  message.dataset.status = String(response.status);
  message.textContent = response.ok ? ${JSON.stringify(TEXTS.staleDigest)}
    : problemText(response, problem, ${JSON.stringify(TEXTS.pageArgumentsFailed)});
  call.querySelector('pre.arguments').after(message);
  call.querySelectorAll('button.full-arguments').forEach((button) => { button.disabled = false; });
  if (response.status === 401) { sessionStorage.removeItem(tokenKey); signIn.hidden = false; }
}
const outcomeStates = { 200: 'decided', 202: 'approval-recorded', 403: 'refused', 404: 'gone', 409: 'stale', 410: 'expired', 429: 'throttled' };
async function decide(card, decision) {
  const status = card.querySelector('.status');
  const reason = card.querySelector('input[name=reason]').value;
  const body = { digest: card.dataset.digest, decision };
  if (reason) body.reason = reason;
  // Calls ticked to refuse: an approval of the others, each refusal with the reason given.
  const refused = [...card.querySelectorAll('input[name=refuse]:checked')].map((box) => Number(box.value));
  if (decision === 'approve' && refused.length > 0) body.calls = refused.map((index) => ({ index, decision: 'reject' }));
  card.querySelectorAll('.actions button').forEach((button) => { button.disabled = true; });
  const response = await callApi('decideRun', { id: card.dataset.runId }, { body });
  const answer = await response.json().catch(() => ({}));
  card.dataset.outcome = String(response.status);
  card.dataset.state = outcomeStates[response.status] || 'failed';
  status.textContent = response.status === 202 ? answer.message
    : response.ok ? (decision === 'approve' ? ${JSON.stringify(TEXTS.pageApproved)} : ${JSON.stringify(TEXTS.pageRejected)})
    : problemText(response, answer, ${JSON.stringify(TEXTS.pageDecisionFailed)});
  // Decided, stale and expired cards take no further decision; a refused gate leaves rejecting open.
  const final = response.ok || response.status === 409 || response.status === 410 || response.status === 404;
  card.querySelectorAll('.actions button').forEach((button) => { button.disabled = final; });
  if (response.status === 403) card.querySelector('button.approve').disabled = true;
  if (response.status === 409) {
    const reload = document.createElement('button');
    reload.type = 'button';
    reload.className = 'reload';
    reload.textContent = 'Reload the inbox';
    status.append(' ', reload);
  }
  if (response.status === 401) { sessionStorage.removeItem(tokenKey); signIn.hidden = false; }
}
document.getElementById('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(tokenKey, document.getElementById('token').value.trim());
  load();
});
signOut.addEventListener('click', () => { sessionStorage.removeItem(tokenKey); load(); });
cardsElement.addEventListener('click', (event) => {
  const button = event.target.closest('button');
  if (!button) return;
  if (button.classList.contains('more')) { load(button.dataset.cursor); return; }
  if (button.classList.contains('reload')) { load(); return; }
  const card = button.closest('.card');
  if (card && button.classList.contains('full-arguments')) { showFullArguments(button.closest('.call'), card); return; }
  if (card) decide(card, button.classList.contains('approve') ? 'approve' : 'reject');
});
load();
`;

const SCRIPT_HASH = createHash('sha256').update(INBOX_PAGE_SCRIPT).digest('base64');

/** Inline script and style only, pinned by hash: a value that slipped escaping still could not run. */
export const INBOX_PAGE_CSP = `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`;
