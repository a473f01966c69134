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
      const outcome = await decideRun(dependencies, request.principal, runIdOf(request), body);
      // 202: a k-of-n approval is on record, and the write waits for more approvers.
      return { statusCode: outcome.kind === 'approval-recorded' ? 202 : 200, json: outcome };
    },
  };
}
