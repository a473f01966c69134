import { startRun, startRunRequestSchema } from '../../core/runs/start-run.js';
import { viewRun } from '../../core/runs/view-run.js';
import type { RouteHandler } from '../http/http-route.js';
import { parseInput, runIdOf } from './request-parsing.js';

/** POST /runs and GET /runs/{id}: the run owner's routes. */
export function createRunsRoutes(
  dependencies: Parameters<typeof startRun>[0] & Parameters<typeof viewRun>[0],
): Record<string, RouteHandler> {
  return {
    'POST /runs': async (request) => {
      const body = parseInput(startRunRequestSchema, request.body, 'body');
      const outcome = await startRun(dependencies, request.principal, body);
      return { statusCode: 202, json: { runId: outcome.runId, status: outcome.status } };
    },
    'GET /runs/{id}': async (request) => ({
      statusCode: 200,
      json: await viewRun(dependencies, request.principal, runIdOf(request)),
    }),
  };
}
