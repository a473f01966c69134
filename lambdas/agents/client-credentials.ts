import * as oauth from 'oauth4webapi';

/** How long before its expiry a token is replaced, so none expires in flight. */
const REFRESH_MARGIN_SECONDS = 60;

export interface ClientCredentialsOptions {
  /** The token endpoint: `https://<domain>.auth.<region>.amazoncognito.com/oauth2/token` deployed. */
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** @default 'countersign/external-runs' */
  readonly scope?: string;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** @default - the system time, in epoch milliseconds */
  readonly now?: () => number;
}

/**
 * A machine client's access tokens for the approval API (docs/external-agents.md), by the OAuth
 * client-credentials grant through oauth4webapi (a maintained, certified OAuth client): one token
 * is kept and reused until a minute before it expires; concurrent callers share one request. Only
 * a loopback token endpoint (local mode) may be plain http.
 *
 * @example
 * const token = clientCredentialsTokens({ tokenUrl, clientId, clientSecret });
 * const api = createApiClient({ baseUrl, token });
 */
export function clientCredentialsTokens(options: ClientCredentialsOptions): () => Promise<string> {
  const tokenUrl = new URL(options.tokenUrl);
  const server: oauth.AuthorizationServer = { issuer: tokenUrl.origin, token_endpoint: tokenUrl.href };
  const client: oauth.Client = { client_id: options.clientId };
  const loopbackHttp =
    tokenUrl.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(tokenUrl.hostname);
  const now = options.now ?? Date.now;
  const request = async (): Promise<{ token: string; expiresAt: number }> => {
    const response = await oauth.clientCredentialsGrantRequest(
      server,
      client,
      oauth.ClientSecretBasic(options.clientSecret),
      { scope: options.scope ?? 'countersign/external-runs' },
      {
        ...(options.fetch ? { [oauth.customFetch]: options.fetch } : {}),
        ...(loopbackHttp ? { [oauth.allowInsecureRequests]: true } : {}),
      },
    );
    const answer = await oauth.processClientCredentialsResponse(server, client, response);
    const lifetimeSeconds = answer.expires_in ?? 300;
    return {
      token: answer.access_token,
      expiresAt: now() + Math.max(0, lifetimeSeconds - REFRESH_MARGIN_SECONDS) * 1000,
    };
  };
  // One request at a time: callers while it is under way share its answer.
  let current: { token: Promise<string>; expiresAt?: number } | undefined;
  return async () => {
    const expired = current?.expiresAt !== undefined && current.expiresAt <= now();
    if (current === undefined || expired) {
      const held: { token: Promise<string>; expiresAt?: number } = { token: Promise.resolve('') };
      held.token = request().then(
        (answer) => {
          held.expiresAt = answer.expiresAt;
          return answer.token;
        },
        (error: unknown) => {
          // A failed request is not kept: the next caller asks again.
          if (current === held) current = undefined;
          throw error;
        },
      );
      current = held;
    }
    return current.token;
  };
}
