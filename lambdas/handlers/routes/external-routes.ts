import {
  type AwaitExternalAnswerDependencies,
  awaitExternalAnswer,
} from '../../core/external-runs/await-external-answer.js';
import { reportExternalExecution } from '../../core/external-runs/report-external-execution.js';
import {
  type SubmitExternalRunDependencies,
  submitExternalRun,
} from '../../core/external-runs/submit-external-run.js';
import type { RouteImplementations } from '../http/http-api.js';

/**
 * POST /external-runs, GET /external-runs/{id} and POST /external-runs/{id}/report: what an agent
 * that runs elsewhere calls (docs/external-agents.md), with a machine client's token only.
 */
export function createExternalRoutes(
  dependencies: SubmitExternalRunDependencies & AwaitExternalAnswerDependencies,
): RouteImplementations<'api-external'> {
  return {
    submitExternalRun: {
      handle: async (request) => {
        const outcome = await submitExternalRun(
          dependencies,
          request.principal,
          request.body,
          request.principalSource,
        );
        return {
          statusCode: 202,
          json: { runId: outcome.runId, status: 'pending', repeated: outcome.repeated },
        };
      },
    },
    getExternalRun: {
      handle: async (request) => ({
        statusCode: 200,
        json: await awaitExternalAnswer(dependencies, request.principal, request.path.id, request.query.wait),
      }),
    },
    reportExternalExecution: {
      handle: async (request) => ({
        statusCode: 200,
        json: await reportExternalExecution(dependencies, request.principal, request.path.id, request.body),
      }),
    },
  };
}
