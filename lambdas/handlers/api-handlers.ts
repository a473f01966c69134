import type { RunDependencies } from '../core/runs/run-dependencies.js';
import { createAdminApi } from './apis/admin-api.js';
import { createDecisionApi } from './apis/decision-api.js';
import { createGenerateApi } from './apis/generate-api.js';
import { createInboxApi } from './apis/inbox-api.js';
import { createRunsApi } from './apis/runs-api.js';
import { createRunEventsRoute } from './routes/events-routes.js';

/**
 * The five API Lambdas, as functions of their dependencies (AWS adapters deployed, local
 * stand-ins in `npm start`). Each route maps to one use case; no business rule lives here.
 */
export function createApiHandlers(dependencies: RunDependencies) {
  // One module per API Lambda under apis/, so a deployed Lambda imports its own routes alone.
  return {
    runs: createRunsApi(dependencies),
    inbox: createInboxApi(dependencies),
    decision: createDecisionApi(dependencies),
    admin: createAdminApi(dependencies),
    /** POST /configurations/{id}/complete and /translate (seed 003's second entry point). */
    generate: createGenerateApi(dependencies),
    /** GET /runs/{id}/events: a streaming route (server-sent events), not an HTTP API Lambda. */
    events: createRunEventsRoute(dependencies),
  };
}

export type ApiHandlers = ReturnType<typeof createApiHandlers>;
