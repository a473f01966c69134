import type { Writable } from 'node:stream';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { ROUTES, transportOf } from '../../contract/routes.js';
import { nameErrorClass } from '../../core/errors.js';
import { readBearerToken } from '../../core/limits.js';
import type { Logger } from '../../core/ports.js';
import { TEXTS } from '../../core/texts.js';
import type { StreamRouteHandler } from '../routes/events-routes.js';
import {
  EVENT_STREAM_HEADERS,
  type EventStreamResponse,
  sendErrorResponse,
  sendInternalError,
} from './event-stream.js';
import { type HttpApiEvent, jwtAuthorizerOf } from './http-api-event.js';
import { createRouteMatcher, refusalOfUnmatched } from './match-route.js';
import type { OidcTokenVerifier } from './verify-oidc-token.js';

/** `awslambda.HttpResponseStream.from`: sets status and headers on a streamed response. */
export type StartHttpResponse = (
  stream: Writable,
  prelude: { statusCode: number; headers: Record<string, string> },
) => Writable;

/** The routes the function URL serves: the manifest's `function-url` transport. */
const matchRoute = createRouteMatcher(ROUTES.filter((route) => transportOf(route) === 'function-url'));

/**
 * GET /runs/{id}/events behind a Lambda function URL in RESPONSE_STREAM mode. A function URL
 * has no JWT authorizer, so this checks the bearer token itself against the same issuer and
 * audience as the HTTP API, then hands the run events route the claims in the shape the JWT
 * authorizer would have (one claim-reading code path for every route).
 *
 * @example
 * export const handler = awslambda.streamifyResponse(
 *   createRunEventsFunctionUrlHandler({ verify, route, logger, startResponse: awslambda.HttpResponseStream.from }),
 * );
 */
export function createRunEventsFunctionUrlHandler(options: {
  verify: OidcTokenVerifier;
  route: StreamRouteHandler;
  logger: Logger;
  startResponse: StartHttpResponse;
}): (event: LambdaFunctionURLEvent, responseStream: Writable) => Promise<void> {
  return async (event, responseStream) => {
    const response = toEventStreamResponse(responseStream, options.startResponse);
    try {
      // The function URL has no API Gateway in front: it selects the route as API Gateway would.
      const match = matchRoute(event.requestContext?.http?.method ?? 'GET', event.rawPath ?? '');
      if (match.kind !== 'matched') {
        const refusal = refusalOfUnmatched(match);
        return sendErrorResponse(response, refusal.statusCode, refusal.code, refusal.message);
      }
      const token = bearerTokenOf(event);
      const claims = token ? await options.verify(token) : undefined;
      if (!claims) return sendErrorResponse(response, 401, 'unauthenticated', TEXTS.bearerTokenInvalid);
      // The claims as API Gateway's JWT authorizer hands them over, so identifyPrincipal reads them alike.
      const routeEvent: HttpApiEvent = {
        ...(event as unknown as HttpApiEvent),
        routeKey: match.routeKey,
        pathParameters: match.pathParameters,
        requestContext: {
          ...(event.requestContext as HttpApiEvent['requestContext']),
          authorizer: jwtAuthorizerOf(claims),
        },
      };
      await options.route(routeEvent, response);
    } catch (error) {
      const fields = {
        requestId: event.requestContext?.requestId ?? 'unknown',
        errorClass: nameErrorClass(error),
      };
      // A client that hung up is no failure of ours: WARN keeps ERROR (and the 5xx alarm) meaningful.
      if (response.clientGone()) options.logger.warn('run events client gone', fields);
      else options.logger.error('run events request failed', fields);
      if (!response.started()) sendInternalError(response);
      else response.end();
    }
  };
}

/**
 * The function URL is public (auth type NONE): a request without a plausibly shaped bearer
 * token is refused with 401 here, before the handler composes its dependencies, fetches signing
 * keys or verifies anything, so unauthenticated traffic costs a string check per request.
 * Returns true when it answered the request.
 *
 * @example
 * if (refuseWithoutBearerToken(event, responseStream, startResponse)) return;
 */
export function refuseWithoutBearerToken(
  event: LambdaFunctionURLEvent,
  responseStream: Writable,
  startResponse: StartHttpResponse,
): boolean {
  if (bearerTokenOf(event) !== undefined) return false;
  sendErrorResponse(
    toEventStreamResponse(responseStream, startResponse),
    401,
    'unauthenticated',
    TEXTS.bearerTokenInvalid,
  );
  return true;
}

function bearerTokenOf(event: LambdaFunctionURLEvent): string | undefined {
  return readBearerToken(event.headers?.authorization ?? event.headers?.Authorization);
}

function toEventStreamResponse(
  responseStream: Writable,
  startResponse: StartHttpResponse,
): EventStreamResponse & { started(): boolean; clientGone(): boolean } {
  let stream: Writable | undefined;
  // A client that disconnects errors the response stream; unheard, that error would crash the
  // invocation. Writes after it are dropped, as the local server drops them.
  responseStream.on('error', () => undefined);
  const gone = (): boolean => responseStream.destroyed;
  const start = (statusCode: number, headers: Record<string, string>): Writable => {
    stream = startResponse(responseStream, { statusCode, headers });
    return stream;
  };
  return {
    started: () => stream !== undefined,
    clientGone: gone,
    setHeaders(statusCode, headers) {
      if (stream) throw new Error('The response has started already.');
      if (gone()) return;
      start(statusCode, headers);
    },
    write(chunk) {
      if (gone()) return;
      const target = stream ?? start(200, { ...EVENT_STREAM_HEADERS });
      if (!target.writableEnded) target.write(chunk);
    },
    end() {
      if (gone()) return;
      const target = stream ?? start(200, { ...EVENT_STREAM_HEADERS });
      if (!target.writableEnded) target.end();
    },
    onClose(callback) {
      responseStream.once('close', callback);
    },
  };
}
