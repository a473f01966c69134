import { TEXTS } from '../../../core/texts.js';

/**
 * The page script's views, chosen by the address: the inbox (`/`, its filters in the query), a
 * card's own address (`/inbox/runs/{id}`, the run with its card and audit) and the viewer's
 * history (`/?view=decided`, `/?view=mine`). Moving between them keeps the page (and so the
 * session in its memory): links are followed with the History API.
 */
export const VIEWS_SCRIPT = `
const signInSection = document.getElementById('sign-in');
const account = document.getElementById('account');
const views = { inbox: document.getElementById('inbox-view'), run: document.getElementById('run-view'),
  history: document.getElementById('history-view') };

function showSignedIn() {
  signInSection.hidden = true;
  account.hidden = false;
  document.getElementById('who').textContent = session.who || ${JSON.stringify(TEXTS.pageSignedInAs)};
  document.getElementById('who').hidden = !session.who;
}
function showSignedOut(message) {
  stopLiveList();
  account.hidden = true;
  for (const view of Object.values(views)) view.hidden = true;
  signInSection.hidden = false;
  document.getElementById('sign-in-button').hidden = !signInSettings;
  const error = document.getElementById('sign-in-error');
  error.textContent = message || '';
  error.hidden = !message;
}

/** Shows the view the address names; nothing is fetched before the viewer signed in. */
function showView() {
  if (!session.accessToken) { showSignedOut(''); return; }
  const card = matchPath('getCardPage', location.pathname);
  const view = new URLSearchParams(location.search).get('view');
  const name = card ? 'run' : view === 'decided' || view === 'mine' ? 'history' : 'inbox';
  for (const [key, element] of Object.entries(views)) element.hidden = key !== name;
  document.querySelectorAll('nav a[data-view]').forEach((link) => {
    if (link.dataset.view === (card ? '' : view || 'inbox')) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  });
  if (name === 'inbox') { showInbox(); return; }
  stopLiveList();
  if (name === 'run') showRun(card.id);
  else showHistory(view);
}

function go(address) {
  history.pushState(null, '', pageAddress(address));
  showView();
}
window.addEventListener('popstate', showView);
// Links of this page move within it, so the session in memory survives (a reload signs in again).
document.addEventListener('click', (event) => {
  const link = event.target.closest('a[href^="/"]');
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  go(link.getAttribute('href'));
});

async function showRun(runId) {
  const holder = document.getElementById('run');
  holder.dataset.runId = runId;
  holder.textContent = ${JSON.stringify(TEXTS.pageRunLoading)};
  const returnTo = pathOf('getCardPage', { id: runId });
  const response = await callApi('getRun', { id: runId }, { headers: { accept: 'text/html' }, returnTo });
  if (holder.dataset.runId !== runId) return;
  if (!response.ok) { showProblem(holder, response, ${JSON.stringify(TEXTS.pageRunGone)}); return; }
  holder.innerHTML = await response.text();
  showTimes(holder);
  await showAudit(runId, holder);
  const heading = holder.querySelector('h2');
  if (heading) { heading.tabIndex = -1; heading.focus(); }
}

/** A refusal in place of what could not be loaded, with the API's own message. */
async function showProblem(holder, response, fallback) {
  const problem = await response.json().catch(() => ({}));
  holder.textContent = '';
  const paragraph = document.createElement('p');
  paragraph.className = 'error';
  paragraph.dataset.status = String(response.status);
  paragraph.textContent = problemText(response, problem, fallback);
  holder.append(paragraph);
}
`;
