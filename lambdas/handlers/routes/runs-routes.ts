import { type ReceiptReadingDependencies, readRunReceipt } from '../../core/receipts/read-run-receipt.js';
import type { ReceiptDependencies } from '../../core/receipts/receipt-recording.js';
import type { CardReaderDependencies } from '../../core/run-dependencies.js';
import { auditRun } from '../../core/runs/audit-run.js';
import { type CancelRunDependencies, cancelRun } from '../../core/runs/cancel-run.js';
import { type HistoryPage, listMyDecisions, listMyRuns } from '../../core/runs/list-history.js';
import { type RedriveRunDependencies, redriveRun } from '../../core/runs/redrive-run.js';
import { type StartRunDependencies, startRun } from '../../core/runs/start-run.js';
import { viewRun } from '../../core/runs/view-run.js';
import { renderDecisionHistory, renderRunHistory } from '../http/history-page.js';
import type { RequestOf, RouteImplementation, RouteImplementations } from '../http/http-api.js';
import { renderRunAudit, renderRunView } from '../http/run-page.js';

/** What the run routes need: each use case's dependencies, and the receipt chain a receipt is read from. */
export type RunsRouteDependencies = StartRunDependencies &
  CardReaderDependencies &
  CancelRunDependencies &
  RedriveRunDependencies &
  Omit<ReceiptReadingDependencies, 'chain'> & { receipts: Pick<ReceiptDependencies, 'chain'> };

/**
 * POST /runs, GET /runs/{id}, POST /runs/{id}/cancel and /redrive, GET /runs/{id}/receipt (the
 * run's routes), its audit, and the signed-in user's history. The reads answer JSON, or escaped
 * HTML for the inbox page.
 */
export function createRunsRoutes(dependencies: RunsRouteDependencies): RouteImplementations<'api-runs'> {
  return {
    startRun: {
      handle: async (request) => {
        const outcome = await startRun(
          dependencies,
          request.principal,
          request.body,
          request.principalSource,
        );
        return { statusCode: 202, json: { runId: outcome.runId, status: outcome.status } };
      },
    },
    getRun: {
      handle: async (request) => {
        const view = await viewRun(dependencies, request.principal, request.path.id);
        if (request.mediaType === 'text/html') {
          return { statusCode: 200, html: renderRunView(view, dependencies.clock.now()) };
        }
        return { statusCode: 200, json: view };
      },
    },
    getRunReceipt: {
      handle: async (request) => ({
        statusCode: 200,
        json: await readRunReceipt(
          { runs: dependencies.runs, chain: dependencies.receipts.chain },
          request.principal,
          request.path.id,
        ),
      }),
    },
    cancelRun: {
      handle: async (request) => {
        const { kind: _kind, ...outcome } = await cancelRun(
          dependencies,
          request.principal,
          request.path.id,
          request.body,
        );
        return { statusCode: 200, json: outcome };
      },
    },
    getRunAudit: {
      handle: async (request) => {
        const audit = await auditRun(dependencies, request.principal, request.path.id);
        if (request.mediaType === 'text/html') return { statusCode: 200, html: renderRunAudit(audit) };
        return { statusCode: 200, json: audit };
      },
    },
    listMyDecisions: historyRoute(
      (request) => listMyDecisions(dependencies, request.principal, request.query),
      renderDecisionHistory,
    ),
    listMyRuns: historyRoute(
      (request) => listMyRuns(dependencies, request.principal, request.query),
      renderRunHistory,
    ),
    redriveRun: {
      handle: async (request) => {
        const { kind: _kind, ...outcome } = await redriveRun(
          dependencies,
          request.principal,
          request.path.id,
        );
        return { statusCode: 202, json: outcome };
      },
    },
  };
}

/** A paged history list: JSON, or escaped HTML for the page. */
function historyRoute<Id extends 'listMyDecisions' | 'listMyRuns', Item>(
  list: (request: RequestOf<Id>) => Promise<HistoryPage<Item>>,
  render: (items: readonly Item[], cursor?: string) => string,
): RouteImplementation<Id> {
  return {
    handle: async (request) => {
      const page = await list(request);
      if (request.mediaType === 'text/html')
        return { statusCode: 200, html: render(page.items, page.cursor) };
      return { statusCode: 200, json: page };
    },
  };
}
