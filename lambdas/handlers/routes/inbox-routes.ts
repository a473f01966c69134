import * as z from 'zod/mini';
import { INBOX_PAGE_SIZE_DEFAULT, INBOX_PAGE_SIZE_MAX, listInbox } from '../../core/runs/list-inbox.js';
import type { RunDependencies } from '../../core/runs/run-dependencies.js';
import type { RouteHandler } from '../http/http-route.js';
import { INBOX_PAGE_CSP, renderInboxCards, renderInboxPage } from '../http/inbox-page.js';
import { parseInput } from './request-parsing.js';

const inboxQuerySchema = z.strictObject({
  limit: z._default(
    z.coerce.number().check(z.int(), z.gte(1), z.lte(INBOX_PAGE_SIZE_MAX)),
    INBOX_PAGE_SIZE_DEFAULT,
  ),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(2000))),
});

/** GET /inbox (JSON, or the cards as escaped HTML for the page) and GET / (the page shell). */
export function createInboxRoutes(
  dependencies: Parameters<typeof listInbox>[0] & Pick<RunDependencies, 'clock'>,
): Record<string, RouteHandler> {
  return {
    'GET /inbox': async (request) => {
      const query = parseInput(inboxQuerySchema, request.query, 'query');
      const page = await listInbox(dependencies, request.principal, query);
      if (/\btext\/html\b/.test(request.headers.accept ?? '')) {
        return { statusCode: 200, html: renderInboxCards(page.cards, page.cursor, dependencies.clock.now()) };
      }
      return { statusCode: 200, json: page };
    },
    'GET /': async () => ({
      statusCode: 200,
      html: renderInboxPage(),
      headers: { 'content-security-policy': INBOX_PAGE_CSP },
    }),
  };
}
