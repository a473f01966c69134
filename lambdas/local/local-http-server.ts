import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { JWTPayload } from 'jose';
import { CountersignError, describeErrorClass } from '../core/errors.js';
import type { ThrottlingLimits } from '../core/limits.js';
import { type Clock, type Logger, silentLogger, systemClock } from '../core/ports.js';
import { TEXTS } from '../core/texts.js';
import { ClientThrottle } from './client-throttle.js';
import type { BearerTokenVerifier } from './local-jwt-issuer.js';

/** The only interface local mode listens on: it serves demo identities and must not be reachable from elsewhere. */
export const LOCAL_HTTP_HOST = '127.0.0.1';
/** API Gateway HTTP APIs refuse larger payloads with 413; countersign's own limit is the same. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** The one message a client gets for a missing or refused bearer token, whatever the reason. */
export const UNAUTHENTICATED_MESSAGE = 'The bearer token is missing or invalid.';

export type LocalHttpEvent = APIGatewayProxyEventV2WithJWTAuthorizer;
export type LocalHttpResult = APIGatewayProxyStructuredResultV2;

/** A server-sent events response: the local stand-in for a streamed Lambda response. */
export interface LocalResponseStream {
  /** Sets status and headers; call before the first `write`, otherwise 200 `text/event-stream` is sent. */
  setHeaders(statusCode: number, headers: Record<string, string>): void;
  write(chunk: string): void;
  end(): void;
  /** Called once when the response is over: ended by the handler, or the client went away. */
  onClose(callback: () => void): void;
}

interface LocalRouteBase {
  /** HTTP method in upper case (`GET`, `POST`, ...). */
  readonly method: string;
  /** API Gateway path template: `/runs/{id}`, and `{name+}` for a greedy last segment. */
  readonly path: string;
  /**
   * The route key the handler sees in `event.routeKey`.
   * @default - `${method} ${path}`
   */
  readonly routeKey?: string;
  /** `jwt`: a verified bearer token is required, like the deployed JWT authorizer. */
  readonly authentication: 'jwt' | 'none';
}

/** A route served by a Lambda handler with the HTTP API payload v2 signature. */
export interface LocalLambdaRoute extends LocalRouteBase {
  readonly stream?: false;
  readonly handler: (event: LocalHttpEvent) => Promise<LocalHttpResult>;
}

/**
 * A streaming route (server-sent events). The response ends when the handler calls `end()`
 * or its promise settles, as a streamed Lambda invocation ends with its handler.
 */
export interface LocalStreamRoute extends LocalRouteBase {
  readonly stream: true;
  readonly handler: (event: LocalHttpEvent, stream: LocalResponseStream) => Promise<void>;
}

export type LocalRoute = LocalLambdaRoute | LocalStreamRoute;

export interface LocalHttpServerOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one (read it from `start()`). */
  readonly port: number;
  readonly routes: readonly LocalRoute[];
  /** Verifies bearer tokens for `jwt` routes. */
  readonly verifier: BearerTokenVerifier;
  /**
   * Request outcomes and handler failures (route key, status, error class; never a token or body).
   * @default - a silent logger
   */
  readonly logger?: Logger;
  /**
   * Largest accepted request body.
   * @default - 1 MiB
   */
  readonly maxBodyBytes?: number;
  /**
   * Time source for `requestContext.time` and `timeEpoch`.
   * @default - the system clock
   */
  readonly clock?: Clock;
  /**
   * Rate and burst per client (its bearer token, else its address): a client over its limit
   * gets 429 before routing or authentication, as API Gateway throttles; others are still served.
   * @default - no throttling (the embedded runtime passes the construct's defaults)
   */
  readonly throttling?: ThrottlingLimits;
}

interface CompiledRoute {
  readonly route: LocalRoute;
  readonly routeKey: string;
  readonly segments: readonly string[];
  /** Literal segments count: the more, the more specific, as API Gateway prefers. */
  readonly specificity: number;
}

type RouteMatch =
  | { kind: 'matched'; route: CompiledRoute; pathParameters: Record<string, string> }
  | { kind: 'not-found' }
  | { kind: 'method-not-allowed'; allowedMethods: string[] }
  | { kind: 'bad-path' };

type BodyOutcome = { kind: 'read'; body: Buffer } | { kind: 'too-large' };

/**
 * The local stand-in for the HTTP API: node:http on 127.0.0.1 dispatching to the same Lambda
 * handlers with a faithful payload v2 event. Like API Gateway it throttles (429, per client
 * here: see `throttling`), authenticates `jwt` routes
 * before the handler runs (401), refuses bodies above 1 MiB (413), answers unknown routes and
 * methods itself (404, 405), and turns a throwing handler into a 500 that says nothing.
 *
 * @example
 * const server = new LocalHttpServer({
 *   port: 3000,
 *   verifier: issuer,
 *   routes: [{ method: 'GET', path: '/runs/{id}', authentication: 'jwt', handler: getRunHandler }],
 * });
 * const { url } = await server.start(); // http://127.0.0.1:3000
 */
export class LocalHttpServer {
  private readonly options: LocalHttpServerOptions;
  private readonly routes: readonly CompiledRoute[];
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly maxBodyBytes: number;
  private readonly throttle: ClientThrottle | undefined;
  private server: Server | undefined;

  public constructor(options: LocalHttpServerOptions) {
    if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65_535) {
      throw new CountersignError(
        'configuration',
        `The local HTTP port must be an integer from 0 to 65535, got ${String(options.port)}.`,
      );
    }
    this.options = options;
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.routes = options.routes.map(compileRoute);
    this.throttle = options.throttling ? new ClientThrottle(options.throttling, this.clock) : undefined;
    const routeKeys = new Set<string>();
    for (const compiled of this.routes) {
      const identity = `${compiled.route.method} ${compiled.segments.map((s) => (isParameter(s) ? '{}' : s)).join('/')}`;
      if (routeKeys.has(identity)) {
        throw new CountersignError('configuration', `Two local routes serve ${compiled.routeKey}.`);
      }
      routeKeys.add(identity);
    }
  }

  /** Starts listening on 127.0.0.1; resolves with the base URL (no trailing slash). */
  public async start(): Promise<{ url: string }> {
    if (this.server) throw new CountersignError('internal', 'The local HTTP server is already started.');
    const server = createServer((request, response) => {
      this.handleRequest(request, response).catch((error: unknown) => {
        this.logger.error('http-request-crashed', {
          requestId: response.getHeader('apigw-requestid') ?? 'unknown',
          error: describeErrorClass(error),
        });
        if (!response.headersSent) sendError(response, 500, 'internal', 'Internal error.');
        else response.destroy();
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, LOCAL_HTTP_HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    return { url: `http://${LOCAL_HTTP_HOST}:${address.port}` };
  }

  /** Stops listening and closes every connection, open event streams included. */
  public async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  private async handleRequest(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    response.setHeader('apigw-requestid', requestId);
    const rawUrl = request.url ?? '/';
    const queryStart = rawUrl.indexOf('?');
    const rawPath = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart);
    const rawQueryString = queryStart === -1 ? '' : rawUrl.slice(queryStart + 1);
    const method = (request.method ?? 'GET').toUpperCase();

    if (this.throttle && !this.throttle.take(clientKeyOf(request))) {
      this.logger.info('http-throttled', { method });
      return sendError(response, 429, 'too-many-requests', TEXTS.tooManyRequests);
    }

    const match = this.matchRoute(method, rawPath);
    if (match.kind === 'not-found')
      return sendError(response, 404, 'not-found', 'No route matches this path.');
    if (match.kind === 'bad-path')
      return sendError(response, 400, 'bad-request', 'The request path is not valid.');
    if (match.kind === 'method-not-allowed') {
      response.setHeader('allow', match.allowedMethods.join(', '));
      return sendError(
        response,
        405,
        'method-not-allowed',
        `This path accepts ${match.allowedMethods.join(', ')}.`,
      );
    }
    const { route, routeKey } = match.route;

    let authorizer: LocalHttpEvent['requestContext']['authorizer'] | undefined;
    if (route.authentication === 'jwt') {
      const claims = await this.authenticate(request, routeKey);
      if (!claims) {
        response.setHeader('www-authenticate', 'Bearer');
        return sendError(response, 401, 'unauthenticated', UNAUTHENTICATED_MESSAGE);
      }
      authorizer = {
        principalId: '',
        integrationLatency: 0,
        jwt: { claims: flattenClaims(claims), scopes: readScopes(claims) },
      };
    }

    const bodyOutcome = await readBody(request, this.maxBodyBytes);
    if (bodyOutcome.kind === 'too-large') {
      // The rest of the body is not read: close the connection instead of draining it.
      response.setHeader('connection', 'close');
      sendError(response, 413, 'payload-too-large', `The request body exceeds ${this.maxBodyBytes} bytes.`);
      response.once('finish', () => request.destroy());
      return;
    }

    const event = this.buildEvent({
      request,
      method,
      rawPath,
      rawQueryString,
      routeKey,
      requestId,
      pathParameters: match.pathParameters,
      body: bodyOutcome.body,
      authorizer,
    });
    const startedAt = Date.now();
    if (route.stream) {
      await this.serveStream(route, routeKey, event, response);
    } else {
      await this.serveLambda(route, routeKey, event, response);
    }
    this.logger.debug('http-request', {
      routeKey,
      status: response.statusCode,
      durationMs: Date.now() - startedAt,
    });
  }

  private async authenticate(request: IncomingMessage, routeKey: string): Promise<JWTPayload | undefined> {
    const header = request.headers.authorization;
    const token = typeof header === 'string' ? /^Bearer +([^\s]+) *$/i.exec(header)?.[1] : undefined;
    if (!token) {
      this.logger.info('http-unauthenticated', { routeKey, reason: 'missing' });
      return undefined;
    }
    const outcome = await this.options.verifier.verify(token);
    if (outcome.kind === 'refused') {
      this.logger.info('http-unauthenticated', { routeKey, reason: outcome.reason });
      return undefined;
    }
    return outcome.claims;
  }

  private async serveLambda(
    route: LocalLambdaRoute,
    routeKey: string,
    event: LocalHttpEvent,
    response: ServerResponse,
  ): Promise<void> {
    let result: unknown;
    try {
      result = await route.handler(event);
    } catch (error) {
      this.logger.error('http-handler-failed', {
        requestId: event.requestContext.requestId,
        routeKey,
        error: describeErrorClass(error),
      });
      return sendError(response, 500, 'internal', 'Internal error.');
    }
    writeLambdaResult(response, result, () =>
      this.logger.error('http-handler-malformed-result', {
        requestId: event.requestContext.requestId,
        routeKey,
      }),
    );
  }

  private async serveStream(
    route: LocalStreamRoute,
    routeKey: string,
    event: LocalHttpEvent,
    response: ServerResponse,
  ): Promise<void> {
    const ensureHeaders = (): void => {
      if (response.headersSent) return;
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
      });
      response.flushHeaders();
    };
    const stream: LocalResponseStream = {
      setHeaders(statusCode, headers) {
        if (response.headersSent) throw new CountersignError('internal', 'Stream headers were already sent.');
        response.writeHead(statusCode, lowerCaseKeys(headers));
        response.flushHeaders();
      },
      write(chunk) {
        if (response.writableEnded || response.destroyed) return;
        ensureHeaders();
        response.write(chunk);
      },
      end() {
        if (response.writableEnded || response.destroyed) return;
        ensureHeaders();
        response.end();
      },
      onClose(callback) {
        if (response.closed) queueMicrotask(callback);
        else response.once('close', callback);
      },
    };
    try {
      await route.handler(event, stream);
    } catch (error) {
      this.logger.error('http-handler-failed', {
        requestId: event.requestContext.requestId,
        routeKey,
        error: describeErrorClass(error),
      });
      if (!response.headersSent) return sendError(response, 500, 'internal', 'Internal error.');
    }
    stream.end();
  }

  private matchRoute(method: string, rawPath: string): RouteMatch {
    const pathSegments = rawPath.split('/').slice(1);
    const candidates: Array<{ route: CompiledRoute; pathParameters: Record<string, string> }> = [];
    for (const route of this.routes) {
      const matched = matchSegments(route.segments, pathSegments);
      if (matched === 'bad-path') return { kind: 'bad-path' };
      if (matched) candidates.push({ route, pathParameters: matched });
    }
    if (candidates.length === 0) return { kind: 'not-found' };
    const sameMethod = candidates.filter((candidate) => candidate.route.route.method === method);
    if (sameMethod.length === 0) {
      const allowedMethods = [...new Set(candidates.map((candidate) => candidate.route.route.method))].sort();
      return { kind: 'method-not-allowed', allowedMethods };
    }
    sameMethod.sort((left, right) => right.route.specificity - left.route.specificity);
    const best = sameMethod[0] as (typeof sameMethod)[number];
    return { kind: 'matched', route: best.route, pathParameters: best.pathParameters };
  }

  private buildEvent(input: {
    request: IncomingMessage;
    method: string;
    rawPath: string;
    rawQueryString: string;
    routeKey: string;
    requestId: string;
    pathParameters: Record<string, string>;
    body: Buffer;
    authorizer: LocalHttpEvent['requestContext']['authorizer'] | undefined;
  }): LocalHttpEvent {
    const { request } = input;
    const headers: Record<string, string> = {};
    // API Gateway joins repeated headers with commas.
    for (const [name, values] of Object.entries(request.headersDistinct)) {
      if (values) headers[name] = values.join(',');
    }
    const cookies = (request.headersDistinct.cookie ?? [])
      .flatMap((header) => header.split(';'))
      .map((cookie) => cookie.trim())
      .filter((cookie) => cookie.length > 0);
    const queryStringParameters: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(input.rawQueryString)) {
      const existing = queryStringParameters[name];
      queryStringParameters[name] = existing === undefined ? value : `${existing},${value}`;
    }
    const now = this.clock.now();
    const host = headers.host ?? LOCAL_HTTP_HOST;
    const domainName = host.replace(/:\d+$/, '');
    const requestContext: LocalHttpEvent['requestContext'] = {
      accountId: '000000000000',
      apiId: 'local',
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: {
        method: input.method,
        path: input.rawPath,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: (request.socket.remoteAddress ?? LOCAL_HTTP_HOST).replace(/^::ffff:/, ''),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: input.requestId,
      routeKey: input.routeKey,
      stage: '$default',
      time: formatRequestTime(now),
      timeEpoch: now.getTime(),
      // Routes without an authorizer carry none, as deployed; the cast keeps one event type.
      authorizer: input.authorizer as LocalHttpEvent['requestContext']['authorizer'],
    };
    if (!input.authorizer) delete (requestContext as { authorizer?: unknown }).authorizer;
    const event: LocalHttpEvent = {
      version: '2.0',
      routeKey: input.routeKey,
      rawPath: input.rawPath,
      rawQueryString: input.rawQueryString,
      headers,
      requestContext,
      isBase64Encoded: false,
    };
    if (cookies.length > 0) event.cookies = cookies;
    if (Object.keys(queryStringParameters).length > 0) event.queryStringParameters = queryStringParameters;
    if (Object.keys(input.pathParameters).length > 0) event.pathParameters = input.pathParameters;
    if (input.body.length > 0) event.body = input.body.toString('utf8');
    return event;
  }
}

function compileRoute(route: LocalRoute): CompiledRoute {
  if (!route.path.startsWith('/')) {
    throw new CountersignError('configuration', `Route path "${route.path}" must start with "/".`);
  }
  const segments = route.path.split('/').slice(1);
  segments.forEach((segment, index) => {
    if (segment.endsWith('+}') && index !== segments.length - 1) {
      throw new CountersignError(
        'configuration',
        `Greedy parameter in "${route.path}" must be the last segment.`,
      );
    }
  });
  return {
    route,
    routeKey: route.routeKey ?? `${route.method} ${route.path}`,
    segments,
    specificity: segments.filter((segment) => !isParameter(segment)).length,
  };
}

function isParameter(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}');
}

function matchSegments(
  template: readonly string[],
  pathSegments: readonly string[],
): Record<string, string> | undefined | 'bad-path' {
  const parameters: Record<string, string> = {};
  for (let index = 0; index < template.length; index += 1) {
    const expected = template[index] as string;
    const actual = pathSegments[index];
    if (actual === undefined) return undefined;
    if (!isParameter(expected)) {
      if (expected !== actual) return undefined;
      continue;
    }
    const greedy = expected.endsWith('+}');
    const name = expected.slice(1, greedy ? -2 : -1);
    const raw = greedy ? pathSegments.slice(index).join('/') : actual;
    if (raw.length === 0) return undefined;
    try {
      parameters[name] = decodeURIComponent(raw);
    } catch {
      return 'bad-path';
    }
    if (greedy) return parameters;
  }
  return pathSegments.length === template.length ? parameters : undefined;
}

async function readBody(request: IncomingMessage, maxBytes: number): Promise<BodyOutcome> {
  const declaredLength = Number(request.headers['content-length'] ?? '0');
  if (Number.isFinite(declaredLength) && declaredLength > maxBytes) return { kind: 'too-large' };
  return new Promise<BodyOutcome>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) {
        request.off('data', onData);
        request.off('end', onEnd);
        request.pause();
        resolve({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => resolve({ kind: 'read', body: Buffer.concat(chunks) });
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('error', reject);
  });
}

/** Like API Gateway: a result without `statusCode` is a 200 JSON body; a malformed one is a 500. */
function writeLambdaResult(response: ServerResponse, result: unknown, onMalformed: () => void): void {
  if (typeof result !== 'object' || result === null || !('statusCode' in result)) {
    const body = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(body);
    return;
  }
  const structured = result as LocalHttpResult;
  const statusCode = structured.statusCode;
  if (
    typeof statusCode !== 'number' ||
    !Number.isInteger(statusCode) ||
    statusCode < 100 ||
    statusCode > 599
  ) {
    onMalformed();
    sendError(response, 500, 'internal', 'Internal error.');
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {}))
    headers[name.toLowerCase()] = String(value);
  if (structured.cookies && structured.cookies.length > 0) headers['set-cookie'] = structured.cookies;
  const body = structured.body ?? '';
  if (body.length > 0 && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  response.writeHead(statusCode, headers);
  response.end(structured.isBase64Encoded ? Buffer.from(body, 'base64') : body);
}

/**
 * Who a request counts against: its bearer token (hashed: the map never holds a token), else
 * its address. Every local client shares 127.0.0.1, so the token is what tells them apart.
 */
function clientKeyOf(request: IncomingMessage): string {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header !== '') {
    return `token:${createHash('sha256').update(header).digest('base64url')}`;
  }
  return `address:${request.socket.remoteAddress ?? 'unknown'}`;
}

function sendError(response: ServerResponse, statusCode: number, code: string, message: string): void {
  response.writeHead(statusCode, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify({ error: { code, message } }));
}

/** API Gateway hands claims over flattened: every value a string, arrays as `[a b]`. */
function flattenClaims(claims: JWTPayload): Record<string, string> {
  const flattened: Record<string, string> = {};
  for (const [name, value] of Object.entries(claims)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) flattened[name] = `[${value.map(String).join(' ')}]`;
    else if (typeof value === 'object' && value !== null) flattened[name] = JSON.stringify(value);
    else flattened[name] = String(value);
  }
  return flattened;
}

function readScopes(claims: JWTPayload): string[] {
  const scope = claims.scope;
  return typeof scope === 'string' ? scope.split(' ').filter((item) => item.length > 0) : [];
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `12/Mar/2020:19:03:58 +0000`, the format of `requestContext.time`. */
function formatRequestTime(date: Date): string {
  const pad = (value: number): string => String(value).padStart(2, '0');
  return (
    `${pad(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`
  );
}
