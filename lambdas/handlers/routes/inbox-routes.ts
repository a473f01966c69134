import type { InboxSignIn } from '../../contract/inbox-sign-in.js';
import type { InboxDependencies } from '../../core/run-dependencies.js';
import { listInbox } from '../../core/runs/list-inbox.js';
import type { RouteImplementations } from '../http/http-api.js';
import { renderCard, renderInboxCards } from '../http/inbox-page.js';
import { renderInboxPage } from '../http/inbox-page-shell.js';
import { readSignInLibrary } from '../http/sign-in-library.js';

const encoder = new TextEncoder();

/** How the page signs approvers in (COUNTERSIGN_INBOX_SIGN_IN deployed; the local provider in `npm start`). */
export interface InboxPageDependencies {
  readonly page: { readonly signIn?: InboxSignIn };
}

/**
 * GET /inbox (JSON, or the cards as escaped HTML for the page; conditional, for the page's live
 * list), GET / and GET /inbox/runs/{id} (the page shell) and the page's sign-in library.
 */
export function createInboxRoutes(
  dependencies: InboxDependencies & InboxPageDependencies,
): Pick<
  RouteImplementations<'api-inbox'>,
  'listInbox' | 'getInboxPage' | 'getCardPage' | 'getSignInLibrary'
> {
  const servePage = {
    handle: async () => {
      const { integrity } = await readSignInLibrary();
      const page = renderInboxPage({
        ...(dependencies.page.signIn ? { signIn: dependencies.page.signIn } : {}),
        libraryIntegrity: integrity,
      });
      return {
        statusCode: 200,
        html: page.html,
        headers: { 'content-security-policy': page.securityPolicy },
      };
    },
  };
  return {
    listInbox: {
      handle: async (request) => {
        const html = request.mediaType === 'text/html';
        const now = dependencies.clock.now();
        const { limit, cursor, sort, configuration, tool, owner, group } = request.query;
        // The page's byte bound is measured on what this answer carries: the cards' HTML or JSON.
        const page = await listInbox(dependencies, request.principal, {
          limit,
          ...(cursor === undefined ? {} : { cursor }),
          order: sort,
          filter: {
            ...(configuration === undefined ? {} : { configurationId: configuration }),
            ...(tool === undefined ? {} : { tool }),
            ...(owner === undefined ? {} : { owner }),
            ...(group === undefined ? {} : { group }),
          },
          ...(html ? { measureCard: (card) => encoder.encode(renderCard(card, now)).byteLength } : {}),
        });
        if (html) return { statusCode: 200, html: renderInboxCards(page.cards, page.cursor, now) };
        return { statusCode: 200, json: page };
      },
    },
    getInboxPage: servePage,
    // The same shell: its script reads the run id from the address once the viewer signed in.
    getCardPage: servePage,
    getSignInLibrary: {
      handle: async () => ({
        statusCode: 200,
        script: (await readSignInLibrary()).source,
        // Revalidated each load (a 304 while unchanged): the page's integrity names one version.
        headers: { 'cache-control': 'no-cache' },
      }),
    },
  };
}
