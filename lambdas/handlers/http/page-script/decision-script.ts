import { TEXTS } from '../../../core/texts.js';

/**
 * The page script's decisions and what a card shows beside them: Approve and Reject (JSON, with
 * the digest the card showed), the whole arguments of an excerpted call, and the times in the
 * viewer's locale, closing a card whose window passed. Cards sit in the inbox and on a run's own
 * address alike, so the handlers listen on the page's main region.
 */
export const DECISION_SCRIPT = `
const statusTexts = { 401: ${JSON.stringify(TEXTS.pageSignInInvalid)}, 403: null, 404: ${JSON.stringify(TEXTS.pageRunGone)},
  409: ${JSON.stringify(TEXTS.staleDigest)}, 410: ${JSON.stringify(TEXTS.decisionExpired)},
  429: ${JSON.stringify(TEXTS.tooManyRequests)} };
// Throttled (API Gateway answers 429 with its own body): always the same advice, nothing is lost.
function problemText(response, problem, fallback) {
  if (response.status === 429) return statusTexts[429];
  return (problem.error && problem.error.message) || statusTexts[response.status] || fallback;
}
function formatRelative(format, deltaMs) {
  const units = [['day', 86400000], ['hour', 3600000], ['minute', 60000]];
  for (const [unit, size] of units) {
    if (Math.abs(deltaMs) >= size) return format.format(Math.round(deltaMs / size), unit);
  }
  return format.format(Math.round(deltaMs / 1000), 'second');
}
// Times in the viewer's locale and zone, relative and absolute; a card whose window passed closes.
function showTimes(root = document) {
  const now = Date.now();
  const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  root.querySelectorAll('time[data-when]').forEach((element) => {
    const at = Date.parse(element.dataset.when);
    if (Number.isNaN(at)) return;
    element.textContent = formatRelative(relative, at - now) + ' (' + absolute.format(at) + ')';
    element.title = new Date(at).toISOString();
  });
  root.querySelectorAll('.card[data-state=waiting]').forEach((card) => {
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
setInterval(() => showTimes(), 30000);

function cardAddress(card) { return pathOf('getCardPage', { id: card.dataset.runId }); }

async function showFullArguments(call, card) {
  const note = call.querySelector('.excerpt-note');
  call.querySelectorAll('.arguments-error').forEach((element) => element.remove());
  call.querySelectorAll('button.full-arguments').forEach((button) => { button.disabled = true; });
  const response = await callApi('getCall', { id: card.dataset.runId, index: call.dataset.index },
    { headers: { accept: 'text/html' }, returnTo: cardAddress(card) });
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
  const response = await callApi('decideRun', { id: card.dataset.runId }, { body, returnTo: cardAddress(card) });
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
  // A decision that did not go through keeps the card in the live list's hands.
  if (response.status === 429 || response.status === 401) delete card.dataset.outcome;
}

document.querySelector('main').addEventListener('click', (event) => {
  const button = event.target.closest('button');
  const card = button && button.closest('article.card');
  if (!card) return;
  if (button.classList.contains('reload')) { showView(); return; }
  if (button.classList.contains('full-arguments') || button.classList.contains('cut')) {
    showFullArguments(button.closest('.call'), card);
    return;
  }
  if (button.classList.contains('approve')) decide(card, 'approve');
  else if (button.classList.contains('reject')) decide(card, 'reject');
});
`;
