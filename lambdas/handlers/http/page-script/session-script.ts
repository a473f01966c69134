import { TEXTS } from '../../../core/texts.js';

/**
 * The page script's session: signing in with the authorization code flow and PKCE through
 * oauth4webapi (the page's import map pins it), refreshing before expiry, signing out (revoking
 * the refresh token where the provider allows), and every API request with the bearer token. A
 * pasted token is the fallback for API users.
 *
 * Where the secrets live: the access and refresh tokens in this module's memory only; the PKCE
 * verifier, state, nonce and the address to return to in sessionStorage, for the one redirect
 * they must survive, removed on return. Nothing goes to localStorage, a cookie or a URL: the
 * code and state leave the address bar before they are used.
 */
export const SESSION_SCRIPT = `
const signInSettings = JSON.parse(document.getElementById('sign-in-settings').textContent || 'null');
const pendingSignInKey = 'countersign.sign-in';
// Not a token: only whether this tab was signed in, so a reload signs in again without a click.
const signedInHintKey = 'countersign.signed-in';
const session = { accessToken: '', refreshToken: '', via: '', who: '', timer: 0 };
const client = signInSettings ? { client_id: signInSettings.clientId } : undefined;
// oauth4webapi refuses plain http, except that the local sign-in provider of npm start is on 127.0.0.1.
const insecureLoopback = signInSettings !== null && /^http:\\/\\/127\\.0\\.0\\.1[:/]/.test(signInSettings.issuer);
const transport = insecureLoopback ? { [oauth.allowInsecureRequests]: true } : {};
let authorizationServer;

function discover() {
  const issuer = new URL(signInSettings.issuer);
  authorizationServer ??= oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...transport })
    .then((response) => oauth.processDiscoveryResponse(issuer, response))
    .catch((error) => { authorizationServer = undefined; throw error; });
  return authorizationServer;
}
function currentAddress() { return location.pathname + location.search; }
// Paths come from the route manifest (\`routes\`), never written here.
function pathOf(operationId, parameters) {
  return routes[operationId].path.replace(/[{]([A-Za-z]+)[}]/g, (_match, name) => encodeURIComponent(parameters[name]));
}
function matchPath(operationId, pathname) {
  const names = [];
  const pattern = routes[operationId].path.replace(/[{]([A-Za-z]+)[}]/g, (_match, name) => { names.push(name); return '([^/]+)'; });
  const found = new RegExp('^' + pattern + '$').exec(pathname);
  return found ? Object.fromEntries(names.map((name, position) => [name, decodeURIComponent(found[position + 1])])) : null;
}
// Only a path of this page: never another origin, never a protocol-relative '//host'.
function pageAddress(address) { return typeof address === 'string' && /^\\/(?!\\/)/.test(address) ? address : '/'; }

async function startSignIn(returnTo) {
  const as = await discover();
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  sessionStorage.setItem(pendingSignInKey, JSON.stringify({ codeVerifier, state, nonce, returnTo: pageAddress(returnTo) }));
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set('client_id', signInSettings.clientId);
  url.searchParams.set('redirect_uri', signInSettings.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', signInSettings.scopes.join(' '));
  url.searchParams.set('state', state);
  url.searchParams.set('nonce', nonce);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set('code_challenge_method', 'S256');
  location.assign(url.href);
}

// The provider sent the browser back with ?code&state (or ?error): trade the code for tokens.
async function completeSignIn(callback) {
  const pending = JSON.parse(sessionStorage.getItem(pendingSignInKey) || 'null');
  sessionStorage.removeItem(pendingSignInKey);
  // The code and state leave the address bar (and the history entry) before anything else.
  history.replaceState(null, '', pageAddress(pending && pending.returnTo));
  if (!pending) return false;
  try {
    const as = await discover();
    const parameters = oauth.validateAuthResponse(as, client, callback, pending.state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), parameters,
      signInSettings.redirectUri, pending.codeVerifier, transport);
    adopt(await oauth.processAuthorizationCodeResponse(as, client, response,
      { expectedNonce: pending.nonce, requireIdToken: true }), 'sign-in');
    return true;
  } catch {
    showSignedOut(${JSON.stringify(TEXTS.pageSignInFailed)});
    return false;
  }
}

function adopt(tokens, via) {
  session.accessToken = tokens.access_token;
  session.refreshToken = tokens.refresh_token || session.refreshToken;
  session.via = via;
  const claims = oauth.getValidatedIdTokenClaims(tokens);
  if (claims) session.who = claims.name || claims.email || claims['cognito:username'] || claims.sub;
  sessionStorage.setItem(signedInHintKey, '1');
  clearTimeout(session.timer);
  // Refreshed a minute before it expires (halfway through a short-lived one).
  const lifetime = Number(tokens.expires_in) || 3600;
  if (session.refreshToken) session.timer = setTimeout(renewSession, (lifetime > 120 ? lifetime - 60 : lifetime / 2) * 1000);
  showSignedIn();
}

/** A new access token from the refresh token; false when there is none or it was refused. */
async function renewSession() {
  if (session.via !== 'sign-in' || !session.refreshToken) return false;
  try {
    const as = await discover();
    const response = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), session.refreshToken, transport);
    adopt(await oauth.processRefreshTokenResponse(as, client, response), 'sign-in');
    return true;
  } catch {
    session.refreshToken = '';
    return false;
  }
}

/** The sign-in ended mid-session: back through sign-in, returning to \`returnTo\` (the same card). */
function sessionLost(returnTo) {
  forget();
  if (signInSettings && sessionStorage.getItem(signedInHintKey) !== 'pasted') {
    startSignIn(returnTo).catch(() => showSignedOut(${JSON.stringify(TEXTS.pageSignInFailed)}));
    return;
  }
  showSignedOut(${JSON.stringify(TEXTS.pageSignInInvalid)});
}

function forget() {
  clearTimeout(session.timer);
  Object.assign(session, { accessToken: '', refreshToken: '', via: '', who: '', timer: 0 });
}

async function signOut() {
  const { refreshToken, via } = session;
  forget();
  sessionStorage.removeItem(signedInHintKey);
  if (via !== 'sign-in') { showSignedOut(''); return; }
  try {
    const as = await discover();
    if (as.revocation_endpoint && refreshToken) {
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), refreshToken, transport));
    }
  } catch {
    // Revocation is best effort: the tokens are forgotten here whatever the provider answers.
  }
  if (signInSettings.signOutUrl) location.assign(signInSettings.signOutUrl);
  else showSignedOut('');
}

/**
 * One request of the API by its operationId, with the bearer token. A 401 first renews the
 * session once and retries; if that fails, the page goes back through sign-in to \`returnTo\`.
 */
async function callApi(operationId, parameters, options) {
  const route = routes[operationId];
  const path = pathOf(operationId, parameters);
  const query = options.query ? '?' + new URLSearchParams(options.query) : '';
  const send = () => {
    const headers = Object.assign({}, options.headers);
    if (session.accessToken) headers.authorization = 'Bearer ' + session.accessToken;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    return fetch(path + query, { method: route.method, headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  };
  let response = await send();
  if (response.status === 401 && await renewSession()) response = await send();
  if (response.status === 401) sessionLost(options.returnTo || currentAddress());
  return response;
}

document.getElementById('sign-in-button').addEventListener('click', () => {
  startSignIn(currentAddress()).catch(() => showSignedOut(${JSON.stringify(TEXTS.pageSignInFailed)}));
});
document.getElementById('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const field = document.getElementById('token');
  forget();
  session.accessToken = field.value.trim();
  session.via = 'pasted';
  field.value = '';
  sessionStorage.setItem(signedInHintKey, 'pasted');
  showSignedIn();
  showView();
});
document.getElementById('sign-out').addEventListener('click', () => { signOut(); });

/** On load: finish a sign-in the provider returned from, or resume one this tab had. */
async function restoreSession() {
  const here = new URL(location.href);
  if (signInSettings && (here.searchParams.has('code') || here.searchParams.has('error'))) {
    return completeSignIn(here);
  }
  if (signInSettings && sessionStorage.getItem(signedInHintKey) === '1') {
    await startSignIn(currentAddress());
    return false;
  }
  if (sessionStorage.getItem(signedInHintKey) === 'pasted') sessionStorage.removeItem(signedInHintKey);
  return false;
}
`;
