import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { EXTERNAL_RUNS_SCOPE } from '../contract/route-definition.js';
import { CountersignError } from '../core/errors.js';
import { closeHttpServer, listenLocally, readBody } from './local-http-io.js';
import { LOCAL_HTTP_HOST } from './local-http-server.js';
import type { LocalMachineClients } from './local-machine-clients.js';

/** The token endpoint's path, as Cognito's domain serves it. */
export const LOCAL_TOKEN_PATH = '/oauth2/token';
/** A machine token lives an hour, Cognito's default for an app client. */
const TOKEN_SECONDS = 3600;
const MAX_FORM_BYTES = 8 * 1024;

/** An answer of the token endpoint: RFC 6749's JSON, never cached. */
export interface TokenEndpointAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The client-credentials grant (RFC 6749, section 4.4) of local mode, as Cognito's token endpoint
 * answers it: the client authenticates with HTTP Basic (`client_secret_basic`) or in the form
 * (`client_secret_post`), asks for `grant_type=client_credentials` and, optionally, a scope it
 * may have (only `countersign/external-runs`); it gets a bearer access token for an hour. A bad
 * client is a 401 `invalid_client`, a bad request a 400 naming the RFC's error code.
 *
 * @example
 * const answer = await answerTokenRequest(clients, { authorization: 'Basic …', contentType, body: 'grant_type=client_credentials' });
 */
export async function answerTokenRequest(
  clients: LocalMachineClients,
  request: { authorization?: string; contentType?: string; body: string },
): Promise<TokenEndpointAnswer> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(request.contentType ?? '')) {
    return tokenError(400, 'invalid_request', 'Send the form as application/x-www-form-urlencoded.');
  }
  const form = new URLSearchParams(request.body);
  const credentials = readClientCredentials(request.authorization, form);
  if (credentials === 'ambiguous') {
    return tokenError(400, 'invalid_request', 'Authenticate the client one way only.');
  }
  const client = credentials && clients.authenticate(credentials.clientId, credentials.clientSecret);
  if (!client) return tokenError(401, 'invalid_client', 'Client authentication failed.');
  if (form.get('grant_type') !== 'client_credentials') {
    return tokenError(400, 'unsupported_grant_type', 'Only client_credentials is supported here.');
  }
  const requested = (form.get('scope') ?? EXTERNAL_RUNS_SCOPE).split(' ').filter((scope) => scope !== '');
  if (requested.length === 0 || requested.some((scope) => scope !== EXTERNAL_RUNS_SCOPE)) {
    return tokenError(400, 'invalid_scope', `The only scope is ${EXTERNAL_RUNS_SCOPE}.`);
  }
  const accessToken = await clients.issueToken(client.clientId, TOKEN_SECONDS);
  return answer(200, {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: TOKEN_SECONDS,
    scope: EXTERNAL_RUNS_SCOPE,
  });
}

/** Basic credentials are form-encoded before base64 (RFC 6749, section 2.3.1); both ways at once is refused. */
function readClientCredentials(
  authorization: string | undefined,
  form: URLSearchParams,
): { clientId: string; clientSecret: string } | 'ambiguous' | undefined {
  const inForm = form.has('client_secret');
  const basic = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(authorization ?? '')?.[1];
  if (basic !== undefined && inForm) return 'ambiguous';
  if (basic !== undefined) {
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon <= 0) return undefined;
    try {
      return {
        clientId: decodeURIComponent(decoded.slice(0, colon).replaceAll('+', ' ')),
        clientSecret: decodeURIComponent(decoded.slice(colon + 1).replaceAll('+', ' ')),
      };
    } catch {
      return undefined;
    }
  }
  const clientId = form.get('client_id');
  const clientSecret = form.get('client_secret');
  return clientId && clientSecret ? { clientId, clientSecret } : undefined;
}

function tokenError(status: number, error: string, description: string): TokenEndpointAnswer {
  const answered = answer(status, { error, error_description: description });
  if (status === 401) answered.headers['www-authenticate'] = 'Basic realm="countersign-local"';
  return answered;
}

function answer(status: number, body: Record<string, unknown>): TokenEndpointAnswer {
  return {
    status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      pragma: 'no-cache',
    },
    body: JSON.stringify(body),
  };
}

/**
 * The token endpoint on its own port of 127.0.0.1, as Cognito serves it on its own domain:
 * `POST /oauth2/token`, nothing else.
 *
 * @example
 * const endpoint = new LocalTokenEndpoint({ port: 0, clients });
 * const { tokenUrl } = await endpoint.start(); // http://127.0.0.1:PORT/oauth2/token
 */
export class LocalTokenEndpoint {
  private server: Server | undefined;

  public constructor(private readonly options: { port: number; clients: LocalMachineClients }) {}

  public async start(): Promise<{ tokenUrl: string }> {
    if (this.server) throw new CountersignError('internal', 'The local token endpoint is already started.');
    const server = createServer((request, response) => {
      this.handle(request, response).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
        else response.destroy();
      });
    });
    this.server = server;
    const port = await listenLocally(server, this.options.port, LOCAL_HTTP_HOST);
    return { tokenUrl: `http://${LOCAL_HTTP_HOST}:${port}${LOCAL_TOKEN_PATH}` };
  }

  public async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await closeHttpServer(server);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== LOCAL_TOKEN_PATH) {
      response.writeHead(404).end();
      return;
    }
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const body = await readBody(request, MAX_FORM_BYTES);
    if (body.kind === 'client-gone') return;
    if (body.kind === 'too-large') {
      const refused = tokenError(400, 'invalid_request', 'The form is too large.');
      response.writeHead(refused.status, { ...refused.headers, connection: 'close' }).end(refused.body);
      return;
    }
    const answered = await answerTokenRequest(this.options.clients, {
      ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}),
      ...(request.headers['content-type'] ? { contentType: request.headers['content-type'] } : {}),
      body: body.body.toString('utf8'),
    });
    response.writeHead(answered.status, answered.headers).end(answered.body);
  }
}
