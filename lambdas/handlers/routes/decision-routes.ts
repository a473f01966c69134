import { decideRun, decisionRequestSchema } from '../../core/runs/decide-run.js';
import type { DecisionDependencies } from '../../core/runs/run-dependencies.js';
import { defineRoute, type RouteImplementations } from '../http/http-api.js';
import { runIdOf } from './request-parsing.js';

/** POST /runs/{id}/decision: the only route that resumes a run. */
export function createDecisionRoutes(
  dependencies: DecisionDependencies,
): RouteImplementations<'api-decision'> {
  return {
    decideRun: defineRoute({
      body: decisionRequestSchema,
      // A missing body is an empty one: the 400 names the first field it lacks.
      bodyOptional: true,
      handle: async (request) => {
        const outcome = await decideRun(dependencies, request.principal, runIdOf(request), request.body);
        // 202: a k-of-n approval is on record, and the write waits for more approvers.
        return { statusCode: outcome.kind === 'approval-recorded' ? 202 : 200, json: outcome };
      },
    }),
  };
}
