import { clearAway, setAway } from '../../core/delegation/set-away.js';
import type { DecisionDependencies } from '../../core/run-dependencies.js';
import { decideRun } from '../../core/runs/decide-run.js';
import type { RouteImplementations } from '../http/http-api.js';

/**
 * POST /runs/{id}/decision, the only route that resumes a run, and PUT and DELETE
 * /users/{id}/away: who decides an approver's cards while they are away.
 */
export function createDecisionRoutes(
  dependencies: DecisionDependencies,
): RouteImplementations<'api-decision'> {
  return {
    decideRun: {
      handle: async (request) => {
        const outcome = await decideRun(dependencies, request.principal, request.path.id, request.body);
        // 202: a k-of-n approval is on record, and the write waits for more approvers.
        return { statusCode: outcome.kind === 'approval-recorded' ? 202 : 200, json: outcome };
      },
    },
    setAway: {
      handle: async (request) => ({
        statusCode: 200,
        json: await setAway(dependencies, request.principal, request.path.id, request.body),
      }),
    },
    clearAway: {
      handle: async (request) => ({
        statusCode: 200,
        json: await clearAway(dependencies, request.principal, request.path.id),
      }),
    },
  };
}
