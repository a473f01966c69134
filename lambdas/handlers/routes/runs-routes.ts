import { cancelRequestSchema, cancelRun } from '../../core/runs/cancel-run.js';
import { startRun, startRunRequestSchema } from '../../core/runs/start-run.js';
import { viewRun } from '../../core/runs/view-run.js';
import type { RouteHandler } from '../http/http-route.js';
import { parseInput, runIdOf } from './request-parsing.js';

/** POST /runs, GET /runs/{id} and POST /runs/{id}/cancel: the run owner's routes. */
export function createRunsRoutes(
  dependencies: Parameters<typeof startRun>[0] &
    Parameters<typeof viewRun>[0] &
    Parameters<typeof cancelRun>[0],
): Record<string, RouteHandler> {
  return {
    'POST /runs': async (request) => {
      const body = parseInput(startRunRequestSchema, request.body, 'body');
      const outcome = await startRun(dependencies, request.principal, body, request.principalSource);
      return { statusCode: 202, json: { runId: outcome.runId, status: outcome.status } };
    },
    'GET /runs/{id}': async (request) => ({
      statusCode: 200,
      json: await viewRun(dependencies, request.principal, runIdOf(request)),
    }),
    'POST /runs/{id}/cancel': async (request) => {
      const runId = runIdOf(request);
      // The body is optional: a bare POST cancels without a reason.
      const body = parseInput(cancelRequestSchema, request.body ?? {}, 'body');
      const { kind: _kind, ...outcome } = await cancelRun(dependencies, request.principal, runId, body);
      return { statusCode: 200, json: outcome };
    },
  };
}
