import openApiDocument from '../../../docs/openapi.json' with { type: 'json' };
import type { HttpResponse, RouteImplementations } from '../http/http-api.js';

/**
 * GET /openapi.json: the committed OpenAPI 3.1 document, bundled into the function exactly as
 * `npm run openapi` wrote it and the tests compared it. Public: it describes shapes and holds no data.
 */
export async function serveOpenApiDocument(): Promise<HttpResponse> {
  return { statusCode: 200, json: openApiDocument };
}

/** The inbox function's implementation of `getOpenApiDocument`. */
export function createOpenApiRoutes(): Pick<RouteImplementations<'api-inbox'>, 'getOpenApiDocument'> {
  return { getOpenApiDocument: { handle: serveOpenApiDocument } };
}
