import { inboxQuerySchema } from '../../contract/run-schemas.js';
import { listInbox } from '../../core/runs/list-inbox.js';
import type { InboxDependencies } from '../../core/runs/run-dependencies.js';
import { defineRoute, type RouteImplementations } from '../http/http-api.js';
import { INBOX_PAGE_CSP, renderCard, renderInboxCards, renderInboxPage } from '../http/inbox-page.js';

const encoder = new TextEncoder();

/** JSON for clients, or the escaped HTML the inbox page inserts (it asks with `Accept: text/html`). */
export const JSON_OR_HTML = ['application/json', 'text/html'] as const;

/** GET /inbox (JSON, or the cards as escaped HTML for the page) and GET / (the page shell). */
export function createInboxRoutes(
  dependencies: InboxDependencies,
): Pick<RouteImplementations<'api-inbox'>, 'listInbox' | 'getInboxPage'> {
  return {
    listInbox: defineRoute({
      query: inboxQuerySchema,
      mediaTypes: JSON_OR_HTML,
      handle: async (request) => {
        const html = request.mediaType === 'text/html';
        const now = dependencies.clock.now();
        // The page's byte bound is measured on what this answer carries: the cards' HTML or JSON.
        const page = await listInbox(dependencies, request.principal, {
          ...request.query,
          ...(html ? { measureCard: (card) => encoder.encode(renderCard(card, now)).byteLength } : {}),
        });
        if (html) return { statusCode: 200, html: renderInboxCards(page.cards, page.cursor, now) };
        return { statusCode: 200, json: page };
      },
    }),
    getInboxPage: defineRoute({
      handle: async () => ({
        statusCode: 200,
        html: renderInboxPage(),
        headers: { 'content-security-policy': INBOX_PAGE_CSP },
      }),
    }),
  };
}
