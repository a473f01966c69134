import { type ReceiptReadingDependencies, readRunReceipt } from '../../core/receipts/read-run-receipt.js';
import type { ReceiptDependencies } from '../../core/receipts/receipt-recording.js';
import { cancelRequestSchema, cancelRun } from '../../core/runs/cancel-run.js';
import { redriveRun } from '../../core/runs/redrive-run.js';
import { startRun, startRunRequestSchema } from '../../core/runs/start-run.js';
import { viewRun } from '../../core/runs/view-run.js';
import { defineRoute, type RouteImplementations } from '../http/http-api.js';
import { runIdOf } from './request-parsing.js';

/** POST /runs, GET /runs/{id}, POST /runs/{id}/cancel and /redrive, GET /runs/{id}/receipt: the run owner's routes. */
export function createRunsRoutes(
  dependencies: Parameters<typeof startRun>[0] &
    Parameters<typeof viewRun>[0] &
    Parameters<typeof cancelRun>[0] &
    Parameters<typeof redriveRun>[0] &
    Omit<ReceiptReadingDependencies, 'chain'> & { receipts: Pick<ReceiptDependencies, 'chain'> },
): RouteImplementations<'api-runs'> {
  return {
    startRun: defineRoute({
      body: startRunRequestSchema,
      handle: async (request) => {
        const outcome = await startRun(
          dependencies,
          request.principal,
          request.body,
          request.principalSource,
        );
        return { statusCode: 202, json: { runId: outcome.runId, status: outcome.status } };
      },
    }),
    getRun: defineRoute({
      handle: async (request) => ({
        statusCode: 200,
        json: await viewRun(dependencies, request.principal, runIdOf(request)),
      }),
    }),
    getRunReceipt: defineRoute({
      handle: async (request) => ({
        statusCode: 200,
        json: await readRunReceipt(
          { runs: dependencies.runs, chain: dependencies.receipts.chain },
          request.principal,
          runIdOf(request),
        ),
      }),
    }),
    cancelRun: defineRoute({
      // The body is optional: a bare POST cancels without a reason.
      body: cancelRequestSchema,
      bodyOptional: true,
      handle: async (request) => {
        const { kind: _kind, ...outcome } = await cancelRun(
          dependencies,
          request.principal,
          runIdOf(request),
          request.body,
        );
        return { statusCode: 200, json: outcome };
      },
    }),
    redriveRun: defineRoute({
      handle: async (request) => {
        const { kind: _kind, ...outcome } = await redriveRun(
          dependencies,
          request.principal,
          runIdOf(request),
        );
        return { statusCode: 202, json: outcome };
      },
    }),
  };
}
