import type { RunDependencies } from '../core/runs/run-dependencies.js';
import { createHttpHandler } from './http/http-route.js';
import { createAdminRoutes } from './routes/admin-routes.js';
import { createDecisionRoutes } from './routes/decision-routes.js';
import { createRunEventsRoute } from './routes/events-routes.js';
import { createInboxRoutes } from './routes/inbox-routes.js';
import { createRunsRoutes } from './routes/runs-routes.js';

/**
 * The four API Lambdas, as functions of their dependencies (AWS adapters deployed, local
 * stand-ins in `npm start`). Each route maps to one use case; no business rule lives here.
 */
export function createApiHandlers(dependencies: RunDependencies) {
  const edge = { users: dependencies.users, logger: dependencies.logger };
  return {
    runs: createHttpHandler(createRunsRoutes(dependencies), edge),
    inbox: createHttpHandler(createInboxRoutes(dependencies), edge, { publicRoutes: ['GET /'] }),
    decision: createHttpHandler(createDecisionRoutes(dependencies), edge),
    admin: createHttpHandler(createAdminRoutes(dependencies), edge),
    /** GET /runs/{id}/events: a streaming route (server-sent events), not an HTTP API Lambda. */
    events: createRunEventsRoute(dependencies),
  };
}

export type ApiHandlers = ReturnType<typeof createApiHandlers>;
