import { decideRun, decisionRequestSchema } from '../../core/runs/decide-run.js';
import type { RouteHandler } from '../http/http-route.js';
import { parseInput, runIdOf } from './request-parsing.js';

/** POST /runs/{id}/decision: the only route that resumes a run. */
export function createDecisionRoutes(
  dependencies: Parameters<typeof decideRun>[0],
): Record<string, RouteHandler> {
  return {
    'POST /runs/{id}/decision': async (request) => {
      const body = parseInput(decisionRequestSchema, request.body ?? {}, 'body');
      return {
        statusCode: 200,
        json: await decideRun(dependencies, request.principal, runIdOf(request), body),
      };
    },
  };
}
