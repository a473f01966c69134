import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { JWTPayload } from 'jose';
import type { RouteAuth } from '../contract/route-definition.js';
import { CountersignError, nameErrorClass } from '../core/errors.js';
import { readBearerToken, type ThrottlingLimits } from '../core/limits.js';
import { type Clock, type Logger, silentLogger, systemClock } from '../core/ports.js';
import { TEXTS } from '../core/texts.js';
import {
  type EventStreamResponse,
  sendErrorResponse,
  sendInternalError,
} from '../handlers/http/event-stream.js';
import { buildHttpApiEvent } from '../handlers/http/http-api-event.js';
import { createRouteMatcher, type RouteMatch, refusalOfUnmatched } from '../handlers/http/match-route.js';
import { ClientThrottle, throttleClientKey } from './client-throttle.js';
import { toEventStreamResponse } from './local-event-stream.js';
import { closeHttpServer, listenLocally, readBody, writeLambdaResult } from './local-http-io.js';
import type { BearerTokenVerifier, TokenVerification } from './local-jwt-issuer.js';
import { isOwnOrigin } from './local-origin-check.js';

/** The only interface local mode listens on: it serves demo identities and must not be reachable from elsewhere. */
export const LOCAL_HTTP_HOST = '127.0.0.1';
/** API Gateway HTTP APIs refuse larger payloads with 413; countersign's own limit is the same. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** The one message a client gets for a missing or refused bearer token, whatever the reason. */
export const UNAUTHENTICATED_MESSAGE = TEXTS.bearerTokenInvalid;

export type LocalHttpEvent = APIGatewayProxyEventV2WithJWTAuthorizer;
export type LocalHttpResult = APIGatewayProxyStructuredResultV2;

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
  /**
   * `jwt`: a person's verified bearer token is required, like the deployed JWT authorizer;
   * `machine`: a machine client's, with the external-runs scope (`machineVerifier`), like the
   * deployed machine authorizer; `none`: no token.
   */
  readonly authentication: RouteAuth;
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
  readonly handler: (event: LocalHttpEvent, stream: EventStreamResponse) => Promise<void>;
}

export type LocalRoute = LocalLambdaRoute | LocalStreamRoute;

export interface LocalHttpServerOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one (read it from `start()`). */
  readonly port: number;
  readonly routes: readonly LocalRoute[];
  /** Verifies bearer tokens for `jwt` routes. */
  readonly verifier: BearerTokenVerifier;
  /**
   * Verifies bearer tokens for `machine` routes (a machine client's access token).
   * @default - none: every `machine` route answers 401
   */
  readonly machineVerifier?: BearerTokenVerifier;
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
   * Rate and burst per client (its verified principal, else its bearer token, else its address:
   * `throttleClientKey`): a client over its limit gets 429 before routing and before the
   * handler, as API Gateway throttles; others are still served.
   * @default - no throttling (the embedded runtime passes the construct's defaults)
   */
  readonly throttling?: ThrottlingLimits;
}

/** A request's bearer token as read, and what verifying it answered; both absent without one. */
interface Bearer {
  readonly token?: string;
  readonly verification?: TokenVerification;
}

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
  private readonly matchRoute: (method: string, rawPath: string) => RouteMatch<LocalRoute>;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly maxBodyBytes: number;
  private readonly throttle: ClientThrottle | undefined;
  private server: Server | undefined;
  private listeningPort = 0;

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
    this.matchRoute = createRouteMatcher(options.routes);
    this.throttle = options.throttling ? new ClientThrottle(options.throttling, this.clock) : undefined;
  }

  /** Starts listening on 127.0.0.1; resolves with the base URL (no trailing slash). */
  public async start(): Promise<{ url: string }> {
    if (this.server) throw new CountersignError('internal', 'The local HTTP server is already started.');
    const server = createServer((request, response) => {
      this.handleRequest(request, response).catch((error: unknown) => {
        // Whatever failed, the client had already hung up: nobody waits for an answer.
        if (request.destroyed && !request.complete) {
          this.logger.warn('http-client-gone', {
            requestId: response.getHeader('apigw-requestid') ?? 'unknown',
            error: nameErrorClass(error),
          });
          return;
        }
        this.logger.error('http-request-crashed', {
          requestId: response.getHeader('apigw-requestid') ?? 'unknown',
          error: nameErrorClass(error),
        });
        if (!response.headersSent) sendInternalError(toEventStreamResponse(response));
        else response.destroy();
      });
    });
    this.server = server;
    this.listeningPort = await listenLocally(server, this.options.port, LOCAL_HTTP_HOST);
    return { url: `http://${LOCAL_HTTP_HOST}:${this.listeningPort}` };
  }

  /** Stops listening and closes every connection, open event streams included. */
  public async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await closeHttpServer(server);
  }

  private async handleRequest(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    response.setHeader('apigw-requestid', requestId);
    const refuse = (status: number, code: string, message: string): void =>
      sendErrorResponse(toEventStreamResponse(response), status, code, message);
    const rawUrl = request.url ?? '/';
    const queryStart = rawUrl.indexOf('?');
    const rawPath = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart);
    const rawQueryString = queryStart === -1 ? '' : rawUrl.slice(queryStart + 1);
    const method = (request.method ?? 'GET').toUpperCase();

    // Before anything else: a page of another site (or a rebound host name) gets nothing here.
    if (!isOwnOrigin(request, this.listeningPort)) {
      this.logger.info('http-foreign-origin', { method });
      return refuse(403, 'forbidden', TEXTS.localForeignOrigin);
    }

    // Verified once, when the throttle or a `jwt` route first needs it.
    let bearer: Promise<Bearer> | undefined;
    const readBearer = () => {
      bearer ??= this.readBearer(request);
      return bearer;
    };
    if (this.throttle && !this.throttle.take(clientKeyOf(request, await readBearer()))) {
      this.logger.info('http-throttled', { method });
      return refuse(429, 'too-many-requests', TEXTS.tooManyRequests);
    }

    const match = this.matchRoute(method, rawPath);
    if (match.kind !== 'matched') {
      if (match.kind === 'method-not-allowed') response.setHeader('allow', match.allowedMethods.join(', '));
      const refusal = refusalOfUnmatched(match);
      return refuse(refusal.statusCode, refusal.code, refusal.message);
    }
    const { route } = match;
    const routeKey = route.routeKey ?? match.routeKey;

    let claims: JWTPayload | undefined;
    if (route.authentication === 'jwt') {
      claims = this.authenticate(await readBearer(), routeKey);
      if (!claims) return refuse(401, 'unauthenticated', TEXTS.bearerTokenInvalid);
    }
    if (route.authentication === 'machine') {
      claims = await this.authenticateMachine(request, routeKey);
      if (!claims) return refuse(401, 'unauthenticated', TEXTS.bearerTokenInvalid);
    }

    const bodyOutcome = await readBody(request, this.maxBodyBytes);
    if (bodyOutcome.kind === 'client-gone') {
      // Hanging up is the client's choice: INFO, so ERROR lines keep meaning something (issue #30).
      this.logger.info('http-client-gone', { requestId, routeKey });
      return;
    }
    if (bodyOutcome.kind === 'too-large') {
      // The rest of the body is not read: close the connection instead of draining it.
      response.setHeader('connection', 'close');
      refuse(413, 'payload-too-large', TEXTS.requestTooLarge(this.maxBodyBytes));
      response.once('finish', () => request.destroy());
      return;
    }

    const headers: Record<string, string> = {};
    // API Gateway joins repeated headers with commas.
    for (const [name, values] of Object.entries(request.headersDistinct)) {
      if (values) headers[name] = values.join(',');
    }
    const event = buildHttpApiEvent({
      method,
      rawPath,
      rawQueryString,
      headers,
      routeKey,
      requestId,
      pathParameters: match.pathParameters,
      body: bodyOutcome.body.toString('utf8'),
      ...(claims ? { claims } : {}),
      sourceIp: (request.socket.remoteAddress ?? LOCAL_HTTP_HOST).replace(/^::ffff:/, ''),
      protocol: `HTTP/${request.httpVersion}`,
      time: this.clock.now(),
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

  /** The request's bearer token, verified once: the throttle and the `jwt` routes both read it. */
  private async readBearer(request: IncomingMessage): Promise<Bearer> {
    const token = readBearerToken(request.headers.authorization);
    if (token === undefined) return {};
    return { token, verification: await this.options.verifier.verify(token) };
  }

  /** A machine client's token, checked by its own verifier: a person's token is refused here. */
  private async authenticateMachine(
    request: IncomingMessage,
    routeKey: string,
  ): Promise<JWTPayload | undefined> {
    const token = readBearerToken(request.headers.authorization);
    const verification =
      token === undefined || this.options.machineVerifier === undefined
        ? undefined
        : await this.options.machineVerifier.verify(token);
    return this.authenticate(verification === undefined ? {} : { verification }, routeKey);
  }

  private authenticate(bearer: Bearer, routeKey: string): JWTPayload | undefined {
    const outcome = bearer.verification;
    if (outcome === undefined) {
      this.logger.info('http-unauthenticated', { routeKey, reason: 'missing' });
      return undefined;
    }
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
        error: nameErrorClass(error),
      });
      return sendInternalError(toEventStreamResponse(response));
    }
    if (writeLambdaResult(response, result) === 'malformed') {
      this.logger.error('http-handler-malformed-result', {
        requestId: event.requestContext.requestId,
        routeKey,
      });
      sendInternalError(toEventStreamResponse(response));
    }
  }

  private async serveStream(
    route: LocalStreamRoute,
    routeKey: string,
    event: LocalHttpEvent,
    response: ServerResponse,
  ): Promise<void> {
    const stream = toEventStreamResponse(response);
    try {
      await route.handler(event, stream);
    } catch (error) {
      this.logger.error('http-handler-failed', {
        requestId: event.requestContext.requestId,
        routeKey,
        error: nameErrorClass(error),
      });
      if (!response.headersSent) return sendInternalError(stream);
    }
    stream.end();
  }
}

/** Who a request counts against, by the one rule (`throttleClientKey`). */
function clientKeyOf(request: IncomingMessage, { token, verification }: Bearer): string {
  const subject = verification?.kind === 'verified' ? verification.claims.sub : undefined;
  const address = request.socket.remoteAddress;
  return throttleClientKey({
    ...(subject === undefined ? {} : { subject }),
    ...(token === undefined ? {} : { bearerToken: token }),
    ...(address === undefined ? {} : { address }),
  });
}
