import type { CardReaderDependencies } from '../../core/runs/run-dependencies.js';
import { createHttpApi, type HttpApiDependencies, type HttpLambdaHandler } from '../http/http-api.js';
import { createCallRoutes } from '../routes/call-routes.js';
import { createInboxRoutes, type InboxPageDependencies } from '../routes/inbox-routes.js';
import { createOpenApiRoutes } from '../routes/openapi-routes.js';

/**
 * The `inbox` API Lambda: GET /inbox, the page (GET / and a card's address GET /inbox/runs/{id},
 * shells that carry no data, and its sign-in library; public in the manifest), GET
 * /runs/{id}/calls/{index} (the whole arguments a card excerpts: the same reader's reads) and GET
 * /openapi.json (the API's description, public, no data either).
 */
export function createInboxApi(
  dependencies: CardReaderDependencies & InboxPageDependencies & HttpApiDependencies,
): HttpLambdaHandler {
  return createHttpApi(
    'api-inbox',
    { ...createInboxRoutes(dependencies), ...createCallRoutes(dependencies), ...createOpenApiRoutes() },
    dependencies,
  );
}
