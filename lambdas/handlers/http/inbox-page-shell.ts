import type { InboxSignIn } from '../../contract/inbox-sign-in.js';
import { TEXTS } from '../../core/texts.js';
import { escapeHtml } from './escape-html.js';
import { INBOX_PAGE_SCRIPT, inboxPageSecurityPolicy, renderImportMap } from './inbox-page-script.js';
import { INBOX_PAGE_STYLE } from './inbox-page-style.js';

/** What the page shell is rendered with: how approvers sign in here, and the library's integrity. */
export interface InboxPageSettings {
  /** Absent: the page offers only the pasted-token fallback. */
  readonly signIn?: InboxSignIn;
  readonly libraryIntegrity: string;
}

/**
 * The inbox page. GET / and a card's own address (GET /inbox/runs/{id}) serve this shell with
 * no data: a browser cannot send a bearer token when it navigates. Its script signs the viewer
 * in (authorization code + PKCE), then fetches the cards and runs as server-rendered, escaped
 * HTML with the bearer token and posts decisions as JSON. Nothing acts on a GET.
 */
export function renderInboxPage(settings: InboxPageSettings): { html: string; securityPolicy: string } {
  return {
    html: renderShell(settings),
    securityPolicy: inboxPageSecurityPolicy({
      libraryIntegrity: settings.libraryIntegrity,
      connectOrigins: settings.signIn?.connectOrigins ?? [],
    }),
  };
}

/** JSON inside a `<script type="application/json">`: `<` escaped, so nothing can close the element. */
function embedJson(value: unknown): string {
  return JSON.stringify(value ?? null).replace(/</g, '\\u003c');
}

function renderShell(settings: InboxPageSettings): string {
  const text = (value: string) => escapeHtml(value);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>countersign inbox</title>
<style>${INBOX_PAGE_STYLE}</style>
<script type="importmap">${renderImportMap(settings.libraryIntegrity)}</script></head>
<body><a class="skip" href="#main">Skip to the content</a>
<header class="top"><h1>countersign</h1>
<nav aria-label="Views"><a href="/" data-view="inbox">Inbox</a> <a href="/?view=decided" data-view="decided">Decided by me</a> <a href="/?view=mine" data-view="mine">My runs</a></nav>
<div id="account" hidden><span>${text(TEXTS.pageSignedInAs)} <strong><bdi id="who"></bdi></strong></span>
<button type="button" id="sign-out">${text(TEXTS.pageSignOut)}</button></div></header>
<main id="main" tabindex="-1">
<section id="sign-in" hidden aria-labelledby="sign-in-title"><h2 id="sign-in-title" class="view-title">${text(TEXTS.pageSignInButton)}</h2>
<p>${text(TEXTS.pageSignInPrompt)}</p>
<p id="sign-in-error" class="error" role="alert" hidden></p>
<button type="button" id="sign-in-button" class="primary" hidden>${text(TEXTS.pageSignInButton)}</button>
<details${settings.signIn ? '' : ' open'}><summary>${text(TEXTS.pageTokenFallback)}</summary>
<p>${text(TEXTS.pageTokenHelp)}</p>
<form id="token-form"><label>Bearer token <input id="token" type="password" autocomplete="off" required></label>
<button type="submit">Use the token</button></form></details></section>
<section id="inbox-view" hidden aria-labelledby="inbox-title"><h2 id="inbox-title" class="view-title">Waiting for your decision</h2>
<form id="filters" role="search" aria-label="Filter and sort the cards">
<label>Configuration <input name="configuration" autocomplete="off" maxlength="100"></label>
<label>Tool <input name="tool" autocomplete="off" maxlength="128"></label>
<label>Owner <input name="owner" autocomplete="off" maxlength="128"></label>
<label>Routed group <input name="group" autocomplete="off" maxlength="64"></label>
<label>Sort <select name="sort"><option value="newest">Newest first</option><option value="deadline">Closing soon</option></select></label>
<button type="submit">Apply</button></form>
<div id="live" role="status"><span id="live-text"></span> <button type="button" id="show-new" hidden>${text(TEXTS.pageShowNewCards)}</button></div>
<div id="cards"></div></section>
<section id="run-view" hidden aria-label="Run"><p><a href="/">Back to the inbox</a></p><div id="run"></div></section>
<section id="history-view" hidden aria-labelledby="history-title"><h2 id="history-title" class="view-title"></h2><div id="history"></div></section>
</main>
<script type="application/json" id="sign-in-settings">${embedJson(settings.signIn)}</script>
<script type="module">${INBOX_PAGE_SCRIPT}</script></body></html>`;
}
