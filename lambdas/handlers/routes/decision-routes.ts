import { clearAway, setAway } from '../../core/delegation/set-away.js';
import { CountersignError } from '../../core/errors.js';
import type { DecisionDependencies } from '../../core/run-dependencies.js';
import { decideRun } from '../../core/runs/decide-run.js';
import { TEXTS } from '../../core/texts.js';
import type { HttpRequest, RouteImplementations } from '../http/http-api.js';
import { runIdOf } from './request-parsing.js';

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
        const outcome = await decideRun(dependencies, request.principal, runIdOf(request), request.body);
        // 202: a k-of-n approval is on record, and the write waits for more approvers.
        return { statusCode: outcome.kind === 'approval-recorded' ? 202 : 200, json: outcome };
      },
    },
    setAway: {
      handle: async (request) => ({
        statusCode: 200,
        json: await setAway(dependencies, request.principal, userIdOf(request), request.body),
      }),
    },
    clearAway: {
      handle: async (request) => ({
        statusCode: 200,
        json: await clearAway(dependencies, request.principal, userIdOf(request)),
      }),
    },
  };
}

/** The user id of a `/users/{id}` route; one longer than any id could be is as unknown as a missing one. */
function userIdOf(request: Pick<HttpRequest, 'pathParameters'>): string {
  const userId = request.pathParameters.id ?? '';
  if (userId.length === 0 || userId.length > 200)
    throw new CountersignError('not-found', TEXTS.adminIdTooLong('user'));
  return userId;
}
