import { escapeHtml } from '../handlers/http/escape-html.js';

/** A demo user on the local sign-in page. */
export interface SignInChoice {
  readonly userId: string;
  readonly displayName: string;
  readonly grants: readonly string[];
}

/**
 * The local sign-in provider's login page: the stand-in for Cognito's managed login, so its
 * words are its own (not the product's texts). One form posts the authorization request back
 * with the chosen demo user; nothing is typed, because local mode has no passwords.
 */
export function renderSignInPage(input: {
  readonly users: readonly SignInChoice[];
  /** The authorization request's parameters, posted back unchanged. */
  readonly request: Readonly<Record<string, string>>;
  readonly action: string;
}): string {
  const hidden = Object.entries(input.request)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const choices = input.users
    .map(
      (user) => `<li><button type="submit" name="user" value="${escapeHtml(user.userId)}">
  <span class="name">${escapeHtml(user.displayName)}</span> <span class="id">${escapeHtml(user.userId)}</span>
  <span class="grants">${escapeHtml(user.grants.join(', '))}</span></button></li>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in: countersign local</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fbfbfd; }
main { max-width: 32rem; margin: 2rem auto; padding: 0 1rem; }
ul { list-style: none; padding: 0; } li { margin: .5rem 0; }
button { width: 100%; text-align: left; font: inherit; padding: .75rem 1rem; border: 1px solid #d2d2d7;
  border-radius: 8px; background: #fff; color: inherit; cursor: pointer; }
button:focus-visible { outline: 3px solid #1d4f91; outline-offset: 2px; }
.name { font-weight: 600; } .id, .grants { color: #5a5a60; } .grants { display: block; font-size: .9em; }
</style></head>
<body><main><h1>Sign in to countersign (local)</h1>
<p>Local mode has no passwords: choose a demo user.</p>
<form method="post" action="${escapeHtml(input.action)}">
${hidden}
<ul aria-label="Demo users">
${choices}
</ul></form></main></body></html>`;
}

/** The login page's policy: its own style, and the form may post here and land on the client. */
export function signInPageSecurityPolicy(redirectOrigin: string): string {
  return `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${redirectOrigin}; frame-ancestors 'none'; base-uri 'none'`;
}

/** A refused authorization request that must not be redirected (unknown client or redirect URI). */
export function renderSignInError(message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in refused: countersign local</title></head>
<body><main><h1>Sign-in refused</h1><p>${escapeHtml(message)}</p></main></body></html>`;
}
