import { cardPagePath } from '../../contract/card-address.js';
import type { RecordedAct, RunSummary } from '../../core/ports.js';
import { TEXTS } from '../../core/texts.js';
import { escapeHtml } from './escape-html.js';
import { renderTime } from './inbox-page.js';
import { showValue } from './show-value.js';

/** "Decided by me" as HTML: each act links to its run's own address. */
export function renderDecisionHistory(items: readonly RecordedAct[], cursor?: string): string {
  return renderList(
    items.map((act) => {
      const title = act.run ? showValue(act.run.label) : showValue(act.runId);
      const what = escapeHtml(
        TEXTS.historyAct[act.kind === 'approval' ? 'approval' : (act.decision ?? 'approve')],
      );
      const status = act.run ? escapeHtml(act.run.status) : escapeHtml(TEXTS.historyRunGone);
      return `<li data-run-id="${escapeHtml(act.runId)}" data-kind="${escapeHtml(act.kind)}"><a href="${escapeHtml(cardPagePath(act.runId))}">${title}</a>
  <span class="act">${what}</span>, turn ${escapeHtml(act.turn)}, ${renderTime(act.at)}; run ${status}.</li>`;
    }),
    cursor,
  );
}

/** "My runs" as HTML. */
export function renderRunHistory(items: readonly RunSummary[], cursor?: string): string {
  return renderList(
    items.map(
      (
        run,
      ) => `<li data-run-id="${escapeHtml(run.runId)}" data-status="${escapeHtml(run.status)}"><a href="${escapeHtml(cardPagePath(run.runId))}">${showValue(run.label)}</a>
  <span class="act">${escapeHtml(run.status)}</span>, ${escapeHtml(TEXTS.runStarted)} ${renderTime(run.createdAt)}${run.endedAt ? `, ${escapeHtml(TEXTS.runEnded)} ${renderTime(run.endedAt)}` : ''}.</li>`,
    ),
    cursor,
  );
}

function renderList(items: readonly string[], cursor?: string): string {
  if (items.length === 0 && !cursor) return `<p class="empty">${escapeHtml(TEXTS.pageHistoryEmpty)}</p>`;
  const more = cursor
    ? `<button type="button" class="more" data-cursor="${escapeHtml(cursor)}">${escapeHtml(TEXTS.pageOlderEntries)}</button>`
    : '';
  return `<ul class="history-list">${items.join('\n')}</ul>${more}`;
}
