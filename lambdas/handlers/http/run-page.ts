import type { CardView } from '../../core/approvals/card-reader.js';
import type { AuditEntry, RunAudit } from '../../core/runs/audit-run.js';
import type { RunView } from '../../core/runs/view-run.js';
import { TEXTS } from '../../core/texts.js';
import { escapeHtml } from './escape-html.js';
import { renderCard, renderInboxCards, renderTime } from './inbox-page.js';
import { showValue } from './show-value.js';

/**
 * A run at its card's own address (GET /runs/{id} as HTML): what the run is and where it stands,
 * and while it waits its card, drawn exactly as the inbox draws it (the same digest, the same
 * buttons). Every value is marked and isolated as on a card.
 */
export function renderRunView(view: RunView, now: Date): string {
  const summary = TEXTS.runSummary(
    showValue(view.runId),
    showValue(view.owner),
    escapeHtml(view.status),
    view.turn,
  );
  const ended = view.endedAt ? ` <span>${escapeHtml(TEXTS.runEnded)} ${renderTime(view.endedAt)}</span>` : '';
  const reason = view.failureReason ? `<p class="notice">${showValue(view.failureReason)}</p>` : '';
  const card = cardOfView(view);
  // A waiting run's card carries the label as its heading; any other run, the summary does.
  const heading = card ? '' : `<h2>${showValue(view.label)}</h2>\n`;
  return `<article class="run" data-run-id="${escapeHtml(view.runId)}" data-status="${escapeHtml(view.status)}">
${heading}<p class="run-summary">${summary} <span>${escapeHtml(TEXTS.runStarted)} ${renderTime(view.createdAt)}</span>${ended}</p>
${reason}${card ? renderCard(card, now) : ''}${view.unopenableCard ? renderInboxCards([view.unopenableCard], undefined, now) : ''}
</article>`;
}

/** The waiting card of a run view, in the inbox's shape; none when the run does not wait. */
function cardOfView(view: RunView): CardView | undefined {
  const { pausedAt, expiresAt, digest, pendingTools } = view;
  if (view.status !== 'waiting' || !pausedAt || !expiresAt || !digest || !pendingTools) return undefined;
  return {
    runId: view.runId,
    owner: view.owner,
    label: view.label,
    turn: view.turn,
    pausedAt,
    expiresAt,
    digest,
    pendingTools,
    ...(view.approvals ? { approvals: view.approvals } : {}),
    ...(view.approveRefusal ? { approveRefusal: view.approveRefusal } : {}),
    ...(view.approverGroups ? { approverGroups: view.approverGroups } : {}),
    ...(view.context ? { context: view.context } : {}),
  };
}

/** GET /runs/{id}/audit as HTML: one line per entry, oldest first, each with its time. */
export function renderRunAudit(audit: RunAudit): string {
  const entries =
    audit.entries.length === 0
      ? `<p class="empty">${escapeHtml(TEXTS.auditEmpty)}</p>`
      : `<ol>${audit.entries.map(renderAuditEntry).join('\n')}</ol>`;
  return `<section class="audit" aria-labelledby="audit-title"><h3 id="audit-title">${escapeHtml(TEXTS.auditTitle)}</h3>
${entries}</section>`;
}

function renderAuditEntry(entry: AuditEntry): string {
  const at = renderTime(entry.at);
  switch (entry.kind) {
    case 'approval':
      return `<li data-kind="approval">${at} ${TEXTS.auditApproval(showValue(entry.by), entry.turn, escapeHtml(TEXTS.auditTally(entry.count, entry.required)))} ${renderDigest(entry.digest)}</li>`;
    case 'decision': {
      const released = entry.approvedBy
        ? ` ${TEXTS.auditReleasedBy(entry.approvedBy.map(showValue).join(', '))}`
        : '';
      const calls = entry.calls
        .map((call) => `${showValue(call.tool)} (${escapeHtml(TEXTS.auditPreviewShown[call.preview])})`)
        .join(', ');
      const actingFor = entry.actingFor ? ` ${TEXTS.auditActingFor(showValue(entry.actingFor))}` : '';
      const refused = (entry.choices ?? []).filter((choice) => choice.decision === 'reject');
      const refusedCalls =
        entry.decision === 'approve' && refused.length > 0
          ? ` ${escapeHtml(TEXTS.auditRefusedCalls)} ${refused.map((choice) => `${showValue(choice.tool)} (#${escapeHtml(choice.index)})`).join(', ')}.`
          : '';
      return `<li data-kind="decision" data-decision="${escapeHtml(entry.decision)}">${at} ${TEXTS.auditDecision(showValue(entry.by), entry.turn, entry.decision)}${actingFor}${released}${refusedCalls}${renderReason(entry.reason)} ${renderDigest(entry.digest)} ${escapeHtml(TEXTS.auditCalls)} ${calls}</li>`;
    }
    case 'cancel':
      return `<li data-kind="cancel">${at} ${TEXTS.auditCancel(showValue(entry.by))}${renderReason(entry.reason)}</li>`;
    case 'expiry':
      return `<li data-kind="expiry">${at} ${escapeHtml(TEXTS.auditExpiry)}${renderReason(entry.reason)}</li>`;
    case 'failure':
      return `<li data-kind="failure">${at} ${escapeHtml(TEXTS.auditFailure)}${renderReason(entry.reason)}</li>`;
  }
}

function renderReason(reason: string | undefined): string {
  return reason === undefined ? '' : ` ${escapeHtml(TEXTS.auditReason)} ${showValue(reason)}`;
}

function renderDigest(digest: string): string {
  return `${escapeHtml(TEXTS.auditDigest)} <code class="digest">${showValue(digest)}</code>.`;
}
