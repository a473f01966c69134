import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '../../lambdas/local/demo-data.js';
import { LOCAL_JWT_AUDIENCE } from '../../lambdas/local/local-jwt-issuer.js';
import { LocalOidcProvider } from '../../lambdas/local/local-oidc-provider.js';

const REDIRECT_URI = 'http://127.0.0.1:9/';
const CLIENT = { client_id: 'inbox' };
const TRANSPORT = { [oauth.allowInsecureRequests]: true };

describe('the local sign-in provider (OpenID Connect, code flow with PKCE)', () => {
  let keysDirectory: string;
  let provider: LocalOidcProvider;
  let authorizationServer: oauth.AuthorizationServer;

  beforeAll(async () => {
    keysDirectory = await mkdtemp(join(tmpdir(), 'countersign-oidc-'));
    provider = await LocalOidcProvider.start({
      port: 0,
      keysDirectory,
      users: DEMO_USERS,
      accessTokenSeconds: 60,
    });
    provider.registerClient({
      clientId: CLIENT.client_id,
      redirectUris: [REDIRECT_URI],
      signOutUris: [REDIRECT_URI],
    });
    const issuer = new URL(provider.url);
    authorizationServer = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...TRANSPORT }),
    );
  });

  afterAll(async () => {
    await provider.stop();
    await rm(keysDirectory, { recursive: true, force: true });
  });

  /** The authorization request, the login page's choice of `user`, and the redirect it answers. */
  async function authorize(user: string, options: { challenge?: string; redirectUri?: string } = {}) {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const request = new URLSearchParams({
      client_id: CLIENT.client_id,
      redirect_uri: options.redirectUri ?? REDIRECT_URI,
      response_type: 'code',
      scope: 'openid email profile',
      state,
      nonce,
      code_challenge: options.challenge ?? (await oauth.calculatePKCECodeChallenge(codeVerifier)),
      code_challenge_method: 'S256',
    });
    const page = await fetch(`${authorizationServer.authorization_endpoint}?${request}`);
    const html = await page.text();
    request.set('user', user);
    const chosen = await fetch(authorizationServer.authorization_endpoint ?? '', {
      method: 'POST',
      body: request,
      redirect: 'manual',
    });
    return { page, html, chosen, codeVerifier, state, nonce };
  }

  async function signIn(user: string) {
    const flow = await authorize(user);
    const callback = new URL(flow.chosen.headers.get('location') ?? '');
    const parameters = oauth.validateAuthResponse(authorizationServer, CLIENT, callback, flow.state);
    const response = await oauth.authorizationCodeGrantRequest(
      authorizationServer,
      CLIENT,
      oauth.None(),
      parameters,
      REDIRECT_URI,
      flow.codeVerifier,
      TRANSPORT,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(authorizationServer, CLIENT, response, {
      expectedNonce: flow.nonce,
      requireIdToken: true,
    });
    return { tokens, parameters, flow };
  }

  it('discovers its endpoints, lists the demo users and signs one in: an access token the API accepts and an ID token for the page', async () => {
    // Act
    const flow = await authorize('approver');
    const { tokens } = await signIn('approver');
    const verified = await provider.verify(tokens.access_token);

    // Assess
    expect(authorizationServer).toMatchObject({
      issuer: provider.url,
      code_challenge_methods_supported: ['S256'],
      revocation_endpoint: `${provider.url}/oauth2/revoke`,
    });
    expect(flow.page.headers.get('content-security-policy')).toContain(
      `form-action 'self' http://127.0.0.1:9`,
    );
    for (const user of DEMO_USERS) expect(flow.html).toContain(`value="${user.userId}"`);
    expect(verified).toMatchObject({
      kind: 'verified',
      claims: { sub: 'approver', aud: LOCAL_JWT_AUDIENCE },
    });
    expect(decodeJwt(tokens.id_token ?? '')).toMatchObject({ aud: 'inbox', name: 'Abe Approver' });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(tokens.expires_in).toBe(60);
  });

  it('refuses a code without its verifier, and a code used twice', async () => {
    // Prepare
    const flow = await authorize('approver');
    const parameters = oauth.validateAuthResponse(
      authorizationServer,
      CLIENT,
      new URL(flow.chosen.headers.get('location') ?? ''),
      flow.state,
    );
    const exchange = (verifier: string) =>
      oauth
        .authorizationCodeGrantRequest(
          authorizationServer,
          CLIENT,
          oauth.None(),
          parameters,
          REDIRECT_URI,
          verifier,
          TRANSPORT,
        )
        .then((response) => response.json());

    // Act
    const wrongVerifier = await exchange(oauth.generateRandomCodeVerifier());
    const spent = await exchange(flow.codeVerifier);

    // Assess
    expect(wrongVerifier).toMatchObject({ error: 'invalid_grant' });
    expect(spent).toMatchObject({ error: 'invalid_grant' });
  });

  it('refreshes, and after revocation refuses the refresh token', async () => {
    // Prepare
    const { tokens } = await signIn('reviewer');
    const refreshToken = tokens.refresh_token ?? '';
    const refresh = () =>
      oauth.refreshTokenGrantRequest(authorizationServer, CLIENT, oauth.None(), refreshToken, TRANSPORT);

    // Act
    const refreshed = await oauth.processRefreshTokenResponse(authorizationServer, CLIENT, await refresh());
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(authorizationServer, CLIENT, oauth.None(), refreshToken, TRANSPORT),
    );
    const afterRevocation = await (await refresh()).json();

    // Assess
    expect((await provider.verify(refreshed.access_token)).kind).toBe('verified');
    expect(afterRevocation).toMatchObject({ error: 'invalid_grant' });
  });

  it('never redirects to a URI the client did not register, and requires PKCE with S256', async () => {
    // Act
    const unregistered = await authorize('approver', { redirectUri: 'https://evil.example/' });
    const noPkce = await fetch(
      `${authorizationServer.authorization_endpoint}?${new URLSearchParams({
        client_id: CLIENT.client_id,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        state: 's',
      })}`,
      { redirect: 'manual' },
    );
    const signOutElsewhere = await fetch(provider.signOutUrlOf(CLIENT.client_id, 'https://evil.example/'), {
      redirect: 'manual',
    });
    const signOut = await fetch(provider.signOutUrlOf(CLIENT.client_id, REDIRECT_URI), {
      redirect: 'manual',
    });

    // Assess
    expect(unregistered.page.status).toBe(400);
    expect(unregistered.chosen.status).toBe(400);
    expect(unregistered.chosen.headers.get('location')).toBeNull();
    expect(noPkce.status).toBe(302);
    expect(new URL(noPkce.headers.get('location') ?? '').searchParams.get('error')).toBe('invalid_request');
    expect(signOutElsewhere.status).toBe(400);
    expect(signOut.headers.get('location')).toBe(REDIRECT_URI);
  });

  it('refuses a name rebound to 127.0.0.1, and a login form posted from another site', async () => {
    // Arrange
    const { port } = new URL(provider.url);
    const send = (method: string, path: string, headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on('error', reject);
        request.end(method === 'POST' ? `client_id=${CLIENT.client_id}&user=approver` : undefined);
      });
    const form = { 'content-type': 'application/x-www-form-urlencoded' };

    // Act
    const rebound = await send('GET', '/.well-known/openid-configuration', { host: `evil.example:${port}` });
    const ownName = await send('GET', '/.well-known/openid-configuration', { host: `localhost:${port}` });
    const foreignForm = await send('POST', '/oauth2/authorize', {
      ...form,
      host: `127.0.0.1:${port}`,
      origin: 'https://evil.example',
    });
    const pageToken = await send('POST', '/oauth2/token', {
      ...form,
      host: `127.0.0.1:${port}`,
      origin: 'http://127.0.0.1:9',
    });

    // Assess
    expect(rebound).toBe(403);
    expect(ownName).toBe(200);
    expect(foreignForm).toBe(403);
    expect(pageToken).toBe(400); // reaches the token endpoint (CORS), which refuses the bare form
  });
});
