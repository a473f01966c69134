import type { Writable } from 'node:stream';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, LambdaFunctionURLEvent } from 'aws-lambda';
import { describeErrorClass } from '../../core/errors.js';
import { readBearerToken } from '../../core/limits.js';
import type { Logger } from '../../core/ports.js';
import {
  EVENT_STREAM_HEADERS,
  type EventStreamResponse,
  type StreamRouteHandler,
} from '../routes/events-routes.js';
import { JSON_HEADERS } from './http-errors.js';
import type { OidcTokenVerifier } from './verify-oidc-token.js';

/** `awslambda.HttpResponseStream.from`: sets status and headers on a streamed response. */
export type StartHttpResponse = (
  stream: Writable,
  prelude: { statusCode: number; headers: Record<string, string> },
) => Writable;

const EVENTS_PATH = /^\/runs\/([^/]+)\/events\/?$/;
const UNAUTHENTICATED = 'The bearer token is missing or invalid.';

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
      const method = event.requestContext?.http?.method ?? 'GET';
      const match = EVENTS_PATH.exec(event.rawPath ?? '');
      if (!match) return sendError(response, 404, 'not-found', 'No route matches this path.');
      if (method !== 'GET') return sendError(response, 405, 'method-not-allowed', 'This path accepts GET.');
      const token = bearerTokenOf(event);
      const claims = token ? await options.verify(token) : undefined;
      if (!claims) return sendError(response, 401, 'unauthenticated', UNAUTHENTICATED);
      let runId: string;
      try {
        runId = decodeURIComponent(match[1] ?? '');
      } catch {
        return sendError(response, 404, 'not-found', 'Run not found.');
      }
      // The claims as API Gateway's JWT authorizer hands them over, so readPrincipal reads them alike.
      const routeEvent = {
        requestContext: {
          requestId: event.requestContext?.requestId,
          authorizer: { jwt: { claims: flattenClaims(claims), scopes: [] } },
        },
        pathParameters: { id: runId },
      } as unknown as APIGatewayProxyEventV2WithJWTAuthorizer;
      await options.route(routeEvent, response);
    } catch (error) {
      options.logger.error('run events request failed', {
        requestId: event.requestContext?.requestId ?? 'unknown',
        errorClass: describeErrorClass(error),
      });
      if (!response.started()) sendError(response, 500, 'internal', 'Internal error.');
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
  sendError(toEventStreamResponse(responseStream, startResponse), 401, 'unauthenticated', UNAUTHENTICATED);
  return true;
}

function bearerTokenOf(event: LambdaFunctionURLEvent): string | undefined {
  return readBearerToken(event.headers?.authorization ?? event.headers?.Authorization);
}

function toEventStreamResponse(
  responseStream: Writable,
  startResponse: StartHttpResponse,
): EventStreamResponse & { started(): boolean } {
  let stream: Writable | undefined;
  const start = (statusCode: number, headers: Record<string, string>): Writable => {
    stream = startResponse(responseStream, { statusCode, headers });
    return stream;
  };
  return {
    started: () => stream !== undefined,
    setHeaders(statusCode, headers) {
      if (stream) throw new Error('The response has started already.');
      start(statusCode, headers);
    },
    write(chunk) {
      const target = stream ?? start(200, { ...EVENT_STREAM_HEADERS });
      if (!target.writableEnded) target.write(chunk);
    },
    end() {
      const target = stream ?? start(200, { ...EVENT_STREAM_HEADERS });
      if (!target.writableEnded) target.end();
    },
    onClose(callback) {
      responseStream.once('close', callback);
    },
  };
}

function sendError(response: EventStreamResponse, statusCode: number, code: string, message: string): void {
  response.setHeaders(statusCode, {
    ...JSON_HEADERS,
    ...(statusCode === 401 ? { 'www-authenticate': 'Bearer' } : {}),
  });
  response.write(JSON.stringify({ error: { code, message } }));
  response.end();
}

/** API Gateway hands claims over flattened: every value a string, arrays as `[a b]`. */
function flattenClaims(claims: Record<string, unknown>): Record<string, string> {
  const flattened: Record<string, string> = {};
  for (const [name, value] of Object.entries(claims)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) flattened[name] = `[${value.map(String).join(' ')}]`;
    else if (typeof value === 'object' && value !== null) flattened[name] = JSON.stringify(value);
    else flattened[name] = String(value);
  }
  return flattened;
}
