import type { CardReaderDependencies } from '../../core/run-dependencies.js';
import { createHttpApi, type HttpApiDependencies, type HttpLambdaHandler } from '../http/http-api.js';
import { createCallRoutes } from '../routes/call-routes.js';
import { createInboxRoutes, type InboxPageDependencies } from '../routes/inbox-routes.js';
import { createOpenApiRoutes } from '../routes/openapi-routes.js';
import { createRunbookRoutes } from '../routes/runbook-routes.js';

/**
 * The `inbox` API Lambda: GET /inbox, the page (GET / and a card's address GET /inbox/runs/{id},
 * shells that carry no data, and its sign-in library; public in the manifest), GET
 * /runs/{id}/calls/{index} (the whole arguments a card excerpts: the same reader's reads), GET
 * /openapi.json (the API's description, public, no data either) and GET /runbook (the operators'
 * runbook every alarm links to, public, no data).
 */
export function createInboxApi(
  dependencies: CardReaderDependencies & InboxPageDependencies & HttpApiDependencies,
): HttpLambdaHandler {
  return createHttpApi(
    'api-inbox',
    {
      ...createInboxRoutes(dependencies),
      ...createCallRoutes(dependencies),
      ...createOpenApiRoutes(),
      ...createRunbookRoutes(),
    },
    dependencies,
  );
}
