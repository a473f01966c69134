import type { RouteImplementations } from '../http/http-api.js';
import { renderRunbookPage, runbookPagePolicy } from '../http/runbook-page.js';

/**
 * GET /runbook: the operators' runbook, docs/runbook.md as a page, which every alarm links to.
 * Public like the page shell and the OpenAPI document: it describes operations and holds no data.
 */
export function createRunbookRoutes(): Pick<RouteImplementations<'api-inbox'>, 'getRunbook'> {
  return {
    getRunbook: {
      handle: async () => ({
        statusCode: 200,
        html: await renderRunbookPage(),
        headers: { 'content-security-policy': await runbookPagePolicy() },
      }),
    },
  };
}
