import { createHash } from 'node:crypto';
import { routeTableOf } from '../../contract/api-client.js';
import { TEXTS } from '../../core/texts.js';
import { DECISION_SCRIPT } from './page-script/decision-script.js';
import { HISTORY_SCRIPT } from './page-script/history-script.js';
import { LIVE_LIST_SCRIPT } from './page-script/live-list-script.js';
import { SESSION_SCRIPT } from './page-script/session-script.js';
import { VIEWS_SCRIPT } from './page-script/views-script.js';
import { SIGN_IN_LIBRARY_PACKAGE } from './sign-in-library.js';

/** The routes the page's script calls, methods and paths read from the route manifest (never written twice). */
const PAGE_ROUTES = routeTableOf([
  'listInbox',
  'getCall',
  'decideRun',
  'getRun',
  'getRunAudit',
  'listMyDecisions',
  'listMyRuns',
  'getCardPage',
]);

/** Where the page loads its sign-in library from: the manifest's route. */
const SIGN_IN_LIBRARY_PATH = routeTableOf(['getSignInLibrary']).getSignInLibrary.path;

/**
 * The page's one script, a module: the session (sign-in), the views, the live inbox, decisions
 * and history. Its parts are in page-script/, each one concern; they share this module's scope.
 */
export const INBOX_PAGE_SCRIPT = `
import * as oauth from '${SIGN_IN_LIBRARY_PACKAGE}';
const routes = ${JSON.stringify(PAGE_ROUTES)};
${SESSION_SCRIPT}${VIEWS_SCRIPT}${LIVE_LIST_SCRIPT}${DECISION_SCRIPT}${HISTORY_SCRIPT}
restoreSession().then(showView, () => showSignedOut(${JSON.stringify(TEXTS.pageSignInFailed)}));
`;

/**
 * The import map that names the library for the script, with its Subresource Integrity: the
 * browser refuses bytes that are not the ones this page was built with.
 */
export function renderImportMap(libraryIntegrity: string): string {
  return JSON.stringify({
    imports: { [SIGN_IN_LIBRARY_PACKAGE]: SIGN_IN_LIBRARY_PATH },
    integrity: { [SIGN_IN_LIBRARY_PATH]: libraryIntegrity },
  });
}

function sha256Source(text: string): string {
  return `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
}

/**
 * The page's policy: only this script, its import map and the library they pin may run (each
 * by hash; the library's hash is its integrity), a value that slipped escaping still could not.
 * It may call this origin and the sign-in provider's origins, nothing else.
 */
export function inboxPageSecurityPolicy(input: {
  readonly libraryIntegrity: string;
  readonly connectOrigins: readonly string[];
}): string {
  const scripts = [
    sha256Source(INBOX_PAGE_SCRIPT),
    sha256Source(renderImportMap(input.libraryIntegrity)),
    `'${input.libraryIntegrity}'`,
  ];
  const connect = ["'self'", ...input.connectOrigins];
  return `default-src 'none'; script-src ${scripts.join(' ')}; style-src 'unsafe-inline'; connect-src ${connect.join(' ')}; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`;
}
