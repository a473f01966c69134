import type { RouteFunction } from '../contract/route-definition.js';
import type { RunDependencies } from '../core/run-dependencies.js';
import { createAdminApi } from './apis/admin-api.js';
import { createDecisionApi } from './apis/decision-api.js';
import { createExternalApi } from './apis/external-api.js';
import { createGenerateApi } from './apis/generate-api.js';
import { createInboxApi } from './apis/inbox-api.js';
import { createRunsApi } from './apis/runs-api.js';
import type { HttpLambdaHandler } from './http/http-api.js';
import { createRunEventsRoute, type StreamRouteHandler } from './routes/events-routes.js';
import type { InboxPageDependencies } from './routes/inbox-routes.js';

/**
 * The API Lambdas, keyed by the route manifest's function names, as functions of their
 * dependencies (AWS adapters deployed, local stand-ins in `npm start`). Each route maps to one
 * use case; no business rule lives here.
 */
export function createApiHandlers(
  dependencies: RunDependencies,
  page: InboxPageDependencies['page'] = {},
): ApiHandlers {
  // One module per API Lambda under apis/, so a deployed Lambda imports its own routes alone.
  return {
    'api-runs': createRunsApi(dependencies),
    'api-inbox': createInboxApi({ ...dependencies, page }),
    'api-decision': createDecisionApi(dependencies),
    'api-admin': createAdminApi(dependencies),
    /** The approval API of agents that run elsewhere (docs/external-agents.md). */
    'api-external': createExternalApi(dependencies),
    /** POST /configurations/{id}/complete and /translate (docs/skills.md's second entry point). */
    'api-generate': createGenerateApi(dependencies),
    /** GET /runs/{id}/events: a streaming route (server-sent events), not an HTTP API Lambda. */
    'api-run-events': createRunEventsRoute(dependencies),
  };
}

/** The API functions every deployment serves; a channel's route has its own handler (`handlers/channels/`). */
export type ApiHandlers = Record<
  Exclude<RouteFunction, 'api-run-events' | 'slack-interactions'>,
  HttpLambdaHandler
> & {
  'api-run-events': StreamRouteHandler;
};
