import { TEXTS } from '../../../core/texts.js';

/**
 * The page script's history: "Decided by me" and "My runs" (paged, newest first), and a run's
 * audit under the run at its card's own address. Each is escaped HTML from the API.
 */
export const HISTORY_SCRIPT = `
const historyElement = document.getElementById('history');
const historyLists = {
  decided: { operationId: 'listMyDecisions', title: ${JSON.stringify(TEXTS.pageDecidedByMe)} },
  mine: { operationId: 'listMyRuns', title: ${JSON.stringify(TEXTS.pageMyRuns)} },
};

async function showHistory(view, cursor) {
  const list = historyLists[view];
  document.getElementById('history-title').textContent = list.title;
  if (!cursor) historyElement.textContent = '';
  const query = cursor ? { cursor } : {};
  const response = await callApi(list.operationId, {}, { query, headers: { accept: 'text/html' } });
  if (views.history.hidden) return;
  if (!response.ok) { await showProblem(historyElement, response, ${JSON.stringify(TEXTS.pageInboxFailed)}); return; }
  historyElement.querySelector('button.more')?.remove();
  historyElement.insertAdjacentHTML('beforeend', await response.text());
  showTimes(historyElement);
}
historyElement.addEventListener('click', (event) => {
  const button = event.target.closest('button.more');
  if (!button) return;
  button.disabled = true;
  const view = new URLSearchParams(location.search).get('view');
  showHistory(view, button.dataset.cursor);
});

/** The run's audit, under the run: who decided and approved what, when, on which digest. */
async function showAudit(runId, holder) {
  const response = await callApi('getRunAudit', { id: runId },
    { headers: { accept: 'text/html' }, returnTo: pathOf('getCardPage', { id: runId }) });
  if (holder.dataset.runId !== runId || !response.ok) return;
  const audit = document.createElement('div');
  audit.innerHTML = await response.text();
  showTimes(audit);
  holder.append(...audit.childNodes);
}
`;
