import { TEXTS } from '../../../core/texts.js';

/** How often the inbox asks whether its cards changed (a 304 costs no transfer and no re-render). */
const LIVE_LIST_INTERVAL_MS = 10_000;

/**
 * The page script's inbox: the cards as escaped HTML from GET /inbox (filtered and sorted as the
 * address says), kept current by conditional polling. New cards are announced and wait behind a
 * button, so nothing moves under the reader; a card decided, cancelled or expired elsewhere leaves
 * (marked and disabled first while the viewer is on it); a k-of-n tally updates in place.
 */
export const LIVE_LIST_SCRIPT = `
const cardsElement = document.getElementById('cards');
const liveText = document.getElementById('live-text');
const showNewButton = document.getElementById('show-new');
const filtersForm = document.getElementById('filters');
const FILTERS = ['configuration', 'tool', 'owner', 'group', 'sort'];
const live = { etag: '', timer: 0, latest: null, cursor: '' };

function inboxQuery(cursor) {
  const query = {};
  const address = new URLSearchParams(location.search);
  for (const name of FILTERS) if (address.get(name)) query[name] = address.get(name);
  // The poll covers every card shown, so a card further down can leave too.
  query.limit = String(Math.min(100, Math.max(20, cardsElement.querySelectorAll('article.card').length)));
  if (cursor) query.cursor = cursor;
  return query;
}

function showInbox() {
  const address = new URLSearchParams(location.search);
  for (const name of FILTERS) filtersForm.elements[name].value = address.get(name) || (name === 'sort' ? 'newest' : '');
  stopLiveList();
  live.etag = '';
  cardsElement.textContent = '';
  loadCards();
}
function stopLiveList() { clearTimeout(live.timer); live.timer = 0; live.latest = null; hideNewCards(); }

async function loadCards(cursor) {
  clearTimeout(live.timer);
  const headers = { accept: 'text/html' };
  if (live.etag && !cursor) headers['if-none-match'] = live.etag;
  const response = await callApi('listInbox', {}, { query: inboxQuery(cursor), headers });
  if (views.inbox.hidden) return;
  if (response.status === 304) { scheduleLiveList(); return; }
  if (!response.ok) { await showProblem(cardsElement, response, ${JSON.stringify(TEXTS.pageInboxFailed)}); return; }
  const fragment = parseCards(await response.text());
  if (cursor) appendOlder(fragment);
  else {
    live.etag = response.headers.get('etag') || '';
    if (cardsElement.querySelector('article.card, .empty')) mergeCards(fragment);
    else showCards(fragment);
  }
  showTimes(cardsElement);
  scheduleLiveList();
}
function scheduleLiveList() { live.timer = setTimeout(() => { loadCards(); }, ${LIVE_LIST_INTERVAL_MS}); }

function parseCards(html) {
  const template = document.createElement('template');
  template.innerHTML = html;
  return template.content;
}
function cardMap(root) {
  return new Map([...root.querySelectorAll('article.card')].map((card) => [card.dataset.runId, card]));
}
function showCards(fragment) {
  cardsElement.textContent = '';
  cardsElement.append(fragment);
}
function appendOlder(fragment) {
  cardsElement.querySelector('button.more')?.remove();
  const shown = cardMap(cardsElement);
  for (const card of fragment.querySelectorAll('article.card')) if (shown.has(card.dataset.runId)) card.remove();
  cardsElement.querySelector('.empty')?.remove();
  cardsElement.append(fragment);
}

/** Whether the viewer is on a card: its controls have focus, or the pointer is over it. */
function inUse(card) { return card.contains(document.activeElement) || card.matches(':hover'); }

function mergeCards(fragment) {
  const incoming = cardMap(fragment);
  const shown = cardMap(cardsElement);
  let left = 0;
  let tallies = 0;
  for (const [runId, card] of shown) {
    const next = incoming.get(runId);
    if (next === undefined) {
      // The viewer's own decision stays on screen with its outcome until the list is refreshed.
      if (card.dataset.outcome) continue;
      if (inUse(card)) markLeft(card);
      else { card.remove(); left += 1; }
      continue;
    }
    if (card.dataset.left) { card.replaceWith(next); continue; }
    if (next.dataset.digest !== card.dataset.digest) {
      if (inUse(card)) markLeft(card); else card.replaceWith(next);
      continue;
    }
    tallies += replacePart(card, next, '.approvals') + replacePart(card, next, '.approve-refusal');
  }
  const fresh = [...incoming.keys()].filter((runId) => !shown.has(runId));
  live.latest = fresh.length > 0 ? fragment : null;
  const sentences = [];
  if (fresh.length > 0) sentences.push(countText(fresh.length, ${JSON.stringify(TEXTS.pageNewCardsOne)}, ${JSON.stringify(TEXTS.pageNewCardsMany)}));
  if (left > 0) sentences.push(countText(left, ${JSON.stringify(TEXTS.pageCardsLeftOne)}, ${JSON.stringify(TEXTS.pageCardsLeftMany)}));
  if (tallies > 0) sentences.push(${JSON.stringify(TEXTS.pageTallyChanged)});
  showNewButton.hidden = fresh.length === 0;
  if (sentences.length > 0) liveText.textContent = sentences.join(' ');
  if (!cardsElement.querySelector('article.card')) {
    if (fresh.length > 0) showNewCards(); else showCards(fragment);
  }
}

function countText(count, one, many) { return count === 1 ? one : many.replace('{count}', String(count)); }

/** Replaces one part of a shown card by the incoming card's (or removes it); 1 when it changed. */
function replacePart(card, next, selector) {
  const before = card.querySelector(selector);
  const after = next.querySelector(selector);
  if ((before ? before.outerHTML : '') === (after ? after.outerHTML : '')) return 0;
  if (before && after) before.replaceWith(after);
  else if (before) before.remove();
  else card.querySelector('.decision').before(after);
  return 1;
}

function markLeft(card) {
  card.dataset.left = 'true';
  card.dataset.state = 'gone';
  card.querySelectorAll('.decision button, .decision input').forEach((control) => { control.disabled = true; });
  card.querySelector('.status').textContent = ${JSON.stringify(TEXTS.pageCardLeft)};
}

/** The viewer asked for the new cards: the list takes the server's order, keeping the cards on screen. */
function showNewCards() {
  const fragment = live.latest;
  hideNewCards();
  if (!fragment) return;
  const shown = cardMap(cardsElement);
  for (const card of [...fragment.querySelectorAll('article.card')]) {
    const kept = shown.get(card.dataset.runId);
    if (kept && kept.dataset.digest === card.dataset.digest) card.replaceWith(kept);
  }
  showCards(fragment);
  showTimes(cardsElement);
  const heading = cardsElement.querySelector('article.card h2');
  if (heading) { heading.tabIndex = -1; heading.focus(); }
}
function hideNewCards() { showNewButton.hidden = true; live.latest = null; }

showNewButton.addEventListener('click', showNewCards);
filtersForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const query = new URLSearchParams();
  for (const name of FILTERS) {
    const value = filtersForm.elements[name].value.trim();
    if (value && !(name === 'sort' && value === 'newest')) query.set(name, value);
  }
  go('/' + (query.size > 0 ? '?' + query : ''));
});
cardsElement.addEventListener('click', (event) => {
  const button = event.target.closest('button');
  if (button && button.classList.contains('more')) { button.disabled = true; loadCards(button.dataset.cursor); }
});
`;
