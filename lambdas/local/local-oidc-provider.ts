import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CountersignError } from '../core/errors.js';
import { type Clock, type Logger, silentLogger, systemClock } from '../core/ports.js';
import { readBody } from './local-http-io.js';
import { LOCAL_HTTP_HOST } from './local-http-server.js';
import { type BearerTokenVerifier, LocalJwtIssuer, type TokenVerification } from './local-jwt-issuer.js';
import { isOwnHost, isOwnOrigin } from './local-origin-check.js';
import {
  renderSignInError,
  renderSignInPage,
  type SignInChoice,
  signInPageSecurityPolicy,
} from './local-sign-in-page.js';

/** An app registered with the provider: a public client (no secret), as the inbox page is. */
export interface LocalOidcClient {
  readonly clientId: string;
  /** Where an authorization may return: exact matches only, as Cognito compares them. */
  readonly redirectUris: readonly string[];
  /** Where signing out may return. */
  readonly signOutUris: readonly string[];
}

export interface LocalOidcProviderOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  readonly port: number;
  /** Where the signing key is kept (the local issuer's, shared with the banner's tokens). */
  readonly keysDirectory: string;
  /** The people who may sign in: the demo users. */
  readonly users: readonly SignInChoice[];
  /** @default 3600, as Cognito's default */
  readonly accessTokenSeconds?: number;
  /** @default 12 hours, the construct's refresh token validity */
  readonly refreshTokenSeconds?: number;
  /** @default - the system clock */
  readonly clock?: Clock;
  /** @default - a silent logger */
  readonly logger?: Logger;
}

/** The OAuth endpoints, under the issuer URL (the discovery document names them). */
const ENDPOINTS = {
  discovery: '/.well-known/openid-configuration',
  keys: '/.well-known/jwks.json',
  authorization: '/oauth2/authorize',
  token: '/oauth2/token',
  revocation: '/oauth2/revoke',
  signOut: '/logout',
} as const;

/** An authorization code lives a minute and is used once (RFC 6749, section 4.1.2). */
const CODE_LIFETIME_MS = 60_000;
const MAX_FORM_BYTES = 16 * 1024;

interface PendingCode {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly nonce?: string;
  readonly scope: string;
  readonly userId: string;
  readonly expiresAt: number;
}

interface Grant {
  readonly clientId: string;
  readonly userId: string;
  readonly scope: string;
  readonly expiresAt: number;
}

/**
 * The identity provider of local mode, speaking the subset of OpenID Connect the inbox page uses
 * with Cognito's managed login: discovery, keys, the authorization endpoint (a page listing the
 * demo users), the token endpoint (authorization code with PKCE S256, refresh tokens), revocation
 * (RFC 7009) and Cognito's `/logout`. It runs on its own port, so the page meets the provider on
 * another origin as deployed; its issuer URL is that origin.
 *
 * @example
 * const provider = await LocalOidcProvider.start({ port: 0, keysDirectory, users: DEMO_USERS });
 * provider.registerClient({ clientId: 'countersign-inbox', redirectUris: [`${apiUrl}/`], signOutUris: [`${apiUrl}/`] });
 */
export class LocalOidcProvider implements BearerTokenVerifier {
  private readonly clients = new Map<string, LocalOidcClient>();
  private readonly codes = new Map<string, PendingCode>();
  private readonly refreshTokens = new Map<string, Grant>();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly accessTokenSeconds: number;
  private readonly refreshTokenSeconds: number;

  private constructor(
    private readonly server: Server,
    public readonly issuer: LocalJwtIssuer,
    private readonly options: LocalOidcProviderOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.accessTokenSeconds = options.accessTokenSeconds ?? 3600;
    this.refreshTokenSeconds = options.refreshTokenSeconds ?? 12 * 3600;
  }

  /** Listens on 127.0.0.1, then opens the issuer under the URL it listens on. */
  public static async start(options: LocalOidcProviderOptions): Promise<LocalOidcProvider> {
    let provider: LocalOidcProvider | undefined;
    const server = createServer((request, response) => {
      if (!provider) return void response.writeHead(503).end();
      provider.handle(request, response).catch((error: unknown) => {
        provider?.logger.error('sign-in-request-crashed', { error: (error as Error)?.name ?? 'unknown' });
        if (!response.headersSent) response.writeHead(500).end();
        else response.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, LOCAL_HTTP_HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const issuer = await LocalJwtIssuer.open({
      keysDirectory: options.keysDirectory,
      issuerUrl: `http://${LOCAL_HTTP_HOST}:${port}`,
      ...(options.clock ? { clock: options.clock } : {}),
    });
    provider = new LocalOidcProvider(server, issuer, options);
    return provider;
  }

  /** The issuer URL: `http://127.0.0.1:<port>`, no trailing slash. */
  public get url(): string {
    return this.issuer.issuerUrl;
  }

  /** Cognito's sign-out address for a client: it ends the session here, then returns to `logoutUri`. */
  public signOutUrlOf(clientId: string, logoutUri: string): string {
    return `${this.url}${ENDPOINTS.signOut}?${new URLSearchParams({ client_id: clientId, logout_uri: logoutUri })}`;
  }

  public registerClient(client: LocalOidcClient): void {
    this.clients.set(client.clientId, client);
  }

  /** Verifies a bearer token as the API's authorizer does (this issuer, the API's audience). */
  public verify(token: string): Promise<TokenVerification> {
    return this.issuer.verify(token);
  }

  public async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url);
    const route = `${request.method ?? 'GET'} ${url.pathname}`;
    const port = Number(new URL(this.url).port);
    // As the local API: a name rebound to 127.0.0.1 is refused, and the login form is posted
    // only from this provider's own page (no other site signs a user in through it).
    const ownRequest =
      route === `POST ${ENDPOINTS.authorization}` ? isOwnOrigin(request, port) : isOwnHost(request, port);
    if (!ownRequest) {
      this.logger.info('sign-in-foreign-origin', { method: request.method ?? 'GET' });
      return sendJson(response, 403, { error: 'forbidden' });
    }
    // Discovery, keys, tokens and revocation are read by the page's script on another origin.
    if (url.pathname !== ENDPOINTS.authorization) allowAnyOrigin(response);
    switch (route) {
      case `GET ${ENDPOINTS.discovery}`:
        return sendJson(response, 200, this.describe());
      case `GET ${ENDPOINTS.keys}`:
        return sendJson(response, 200, this.issuer.jwks());
      case `GET ${ENDPOINTS.authorization}`:
        return this.authorize(url.searchParams, undefined, response);
      case `POST ${ENDPOINTS.authorization}`:
        return this.authorize(await readForm(request), 'chosen', response);
      case `POST ${ENDPOINTS.token}`:
        return this.token(await readForm(request), response);
      case `POST ${ENDPOINTS.revocation}`:
        return this.revoke(await readForm(request), response);
      case `GET ${ENDPOINTS.signOut}`:
        return this.signOut(url.searchParams, response);
      default:
        if (request.method === 'OPTIONS') {
          response.setHeader('access-control-allow-methods', 'GET, POST');
          response.setHeader('access-control-allow-headers', 'content-type, accept, authorization');
          return void response.writeHead(204).end();
        }
        return sendJson(response, 404, { error: 'not_found' });
    }
  }

  private describe(): Record<string, unknown> {
    const at = (path: string) => `${this.url}${path}`;
    return {
      issuer: this.url,
      authorization_endpoint: at(ENDPOINTS.authorization),
      token_endpoint: at(ENDPOINTS.token),
      revocation_endpoint: at(ENDPOINTS.revocation),
      jwks_uri: at(ENDPOINTS.keys),
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['openid', 'profile', 'email'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
    };
  }

  /**
   * The authorization endpoint: an unknown client or redirect URI is refused on the page (never
   * redirected to); anything else wrong goes back to the client as `error`. With a user chosen
   * on the login page, a one-time code goes back instead.
   */
  private authorize(
    parameters: URLSearchParams,
    chosen: 'chosen' | undefined,
    response: ServerResponse,
  ): void {
    const client = this.clients.get(parameters.get('client_id') ?? '');
    const redirectUri = parameters.get('redirect_uri') ?? '';
    if (!client?.redirectUris.includes(redirectUri)) {
      sendHtml(response, 400, renderSignInError('Unknown client_id or redirect_uri.'));
      return;
    }
    const state = parameters.get('state');
    const back = (query: Record<string, string>) => {
      const target = new URL(redirectUri);
      for (const [name, value] of Object.entries(query)) target.searchParams.set(name, value);
      if (state !== null) target.searchParams.set('state', state);
      response.writeHead(302, { location: target.href, 'cache-control': 'no-store' }).end();
    };
    if (parameters.get('response_type') !== 'code') {
      back({ error: 'unsupported_response_type' });
      return;
    }
    const codeChallenge = parameters.get('code_challenge') ?? '';
    // PKCE is required, with S256 only: a plain challenge would be the verifier itself.
    if (parameters.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(codeChallenge)) {
      back({ error: 'invalid_request', error_description: 'PKCE with S256 is required.' });
      return;
    }
    const scope = parameters.get('scope') ?? 'openid';
    const nonce = parameters.get('nonce') ?? undefined;
    if (chosen === undefined) {
      const request = Object.fromEntries(
        [
          'client_id',
          'redirect_uri',
          'response_type',
          'scope',
          'state',
          'nonce',
          'code_challenge',
          'code_challenge_method',
        ]
          .map((name) => [name, parameters.get(name)] as const)
          .filter((entry): entry is [string, string] => entry[1] !== null),
      );
      response.setHeader('content-security-policy', signInPageSecurityPolicy(new URL(redirectUri).origin));
      sendHtml(
        response,
        200,
        renderSignInPage({ users: this.options.users, request, action: ENDPOINTS.authorization }),
      );
      return;
    }
    const user = this.options.users.find((candidate) => candidate.userId === parameters.get('user'));
    if (!user) {
      back({ error: 'access_denied' });
      return;
    }
    const code = randomToken();
    this.codes.set(code, {
      clientId: client.clientId,
      redirectUri,
      codeChallenge,
      ...(nonce === undefined ? {} : { nonce }),
      scope,
      userId: user.userId,
      expiresAt: this.clock.now().getTime() + CODE_LIFETIME_MS,
    });
    this.logger.info('local sign-in', { userId: user.userId, clientId: client.clientId });
    back({ code });
  }

  /** The token endpoint (RFC 6749 section 4.1.3 with PKCE, RFC 7636; section 6 for refresh). */
  private async token(form: URLSearchParams, response: ServerResponse): Promise<void> {
    const refuse = (error: string, description: string) =>
      sendJson(response, 400, { error, error_description: description });
    const client = this.clients.get(form.get('client_id') ?? '');
    if (!client) return refuse('invalid_client', 'Unknown client_id.');
    const now = this.clock.now().getTime();
    if (form.get('grant_type') === 'authorization_code') {
      const code = form.get('code') ?? '';
      const pending = this.codes.get(code);
      // A code is spent by its first use, whatever that use's outcome.
      this.codes.delete(code);
      if (!pending || pending.expiresAt <= now || pending.clientId !== client.clientId) {
        return refuse('invalid_grant', 'The code is unknown, spent or expired.');
      }
      if (pending.redirectUri !== form.get('redirect_uri')) {
        return refuse('invalid_grant', 'redirect_uri differs from the authorization request.');
      }
      if (!matchesChallenge(form.get('code_verifier') ?? '', pending.codeChallenge)) {
        return refuse('invalid_grant', 'code_verifier does not match the code_challenge.');
      }
      const refreshToken = randomToken();
      this.refreshTokens.set(refreshToken, {
        clientId: client.clientId,
        userId: pending.userId,
        scope: pending.scope,
        expiresAt: now + this.refreshTokenSeconds * 1000,
      });
      return sendJson(response, 200, {
        ...(await this.issueTokens(pending, pending.nonce)),
        refresh_token: refreshToken,
      });
    }
    if (form.get('grant_type') === 'refresh_token') {
      const grant = this.refreshTokens.get(form.get('refresh_token') ?? '');
      if (!grant || grant.expiresAt <= now || grant.clientId !== client.clientId) {
        return refuse('invalid_grant', 'The refresh token is unknown, revoked or expired.');
      }
      return sendJson(response, 200, await this.issueTokens(grant, undefined));
    }
    return refuse('unsupported_grant_type', 'Use authorization_code or refresh_token.');
  }

  private async issueTokens(
    grant: Pick<Grant, 'clientId' | 'userId' | 'scope'>,
    nonce: string | undefined,
  ): Promise<Record<string, unknown>> {
    const user = this.options.users.find((candidate) => candidate.userId === grant.userId);
    if (!user) throw new CountersignError('internal', 'A grant names an unknown user.', { expose: false });
    const subject = { sub: user.userId, name: user.displayName, groups: [...user.grants] };
    const expiresInSeconds = this.accessTokenSeconds;
    return {
      access_token: await this.issuer.issue(subject, { expiresInSeconds, clientId: grant.clientId }),
      id_token: await this.issuer.issueIdToken(subject, {
        expiresInSeconds,
        clientId: grant.clientId,
        ...(nonce === undefined ? {} : { nonce }),
      }),
      token_type: 'Bearer',
      expires_in: expiresInSeconds,
      scope: grant.scope,
    };
  }

  /** RFC 7009: a revoked (or unknown) token answers 200 alike. */
  private revoke(form: URLSearchParams, response: ServerResponse): void {
    const token = form.get('token') ?? '';
    const grant = this.refreshTokens.get(token);
    if (grant && grant.clientId === form.get('client_id')) this.refreshTokens.delete(token);
    response.writeHead(200, { 'cache-control': 'no-store' }).end();
  }

  /** Cognito's `/logout?client_id=&logout_uri=`: back to a registered sign-out URI only. */
  private signOut(parameters: URLSearchParams, response: ServerResponse): void {
    const client = this.clients.get(parameters.get('client_id') ?? '');
    const target = parameters.get('logout_uri') ?? '';
    if (!client?.signOutUris.includes(target)) {
      sendHtml(response, 400, renderSignInError('Unknown client_id or logout_uri.'));
      return;
    }
    response.writeHead(302, { location: target, 'cache-control': 'no-store' }).end();
  }
}

function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** RFC 7636 section 4.6: BASE64URL(SHA256(verifier)) equals the challenge, compared in constant time. */
function matchesChallenge(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  const body = await readBody(request, MAX_FORM_BYTES);
  return new URLSearchParams(body.kind === 'read' ? body.body.toString('utf8') : '');
}

function allowAnyOrigin(response: ServerResponse): void {
  response.setHeader('access-control-allow-origin', '*');
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response
    .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    .end(JSON.stringify(body));
}

function sendHtml(response: ServerResponse, status: number, html: string): void {
  response
    .writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
    })
    .end(html);
}
