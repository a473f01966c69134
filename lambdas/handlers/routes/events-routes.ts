import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { routeOf } from '../../contract/routes.js';
import { nameErrorClass } from '../../core/errors.js';
import {
  type QuotaDependencies,
  releaseEventStream,
  takeEventStream,
} from '../../core/quotas/enforce-quotas.js';
import type { TakenLease } from '../../core/quotas/quota-store.js';
import type { CardReaderDependencies } from '../../core/run-dependencies.js';
import { openRunEvents, type RunEvent, type RunEventsOptions } from '../../core/runs/run-events.js';
import { EVENT_STREAM_HEADERS, type EventStreamResponse } from '../http/event-stream.js';
import type { HttpApiDependencies } from '../http/http-api.js';
import { errorResponse } from '../http/http-errors.js';
import { parsePathParameters } from '../http/path-parameters.js';
import { identifyPrincipal } from '../http/read-principal.js';

/** The manifest's entry this route serves: its path parameter is read as the entry says. */
const STREAM_ROUTE = routeOf('streamRunEvents');

/** A streaming route: an HTTP API payload v2 event in, a stream of bytes out. */
export type StreamRouteHandler = (
  event: Pick<APIGatewayProxyEventV2WithJWTAuthorizer, 'requestContext' | 'pathParameters'>,
  response: EventStreamResponse,
) => Promise<void>;

/**
 * One server-sent event: a fixed event name and one line of JSON (JSON never holds a raw
 * newline). `<`, `>` and `&` are written as JSON escapes, so even a client that wrongly
 * injects a value as HTML gets no markup from run output; the parsed values are unchanged.
 */
export function formatServerSentEvent(event: RunEvent): string {
  const data = JSON.stringify(event.data).replace(/[<>&\u2028\u2029]/g, escapeForMarkup);
  return `event: ${event.event}\ndata: ${data}\n\n`;
}

function escapeForMarkup(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * GET /runs/{id}/events as a streaming route. The principal comes from the verified JWT
 * claims, as on every route. Anything refused before the first event (404 for a run the
 * viewer may not see, exactly as GET /runs/{id}) is an ordinary JSON error response; a
 * failure after it ends the stream, and only its class is logged.
 */
export function createRunEventsRoute(
  dependencies: CardReaderDependencies & HttpApiDependencies & QuotaDependencies,
  options: RunEventsOptions = {},
): StreamRouteHandler {
  return async (event, response) => {
    const aborted = new AbortController();
    response.onClose(() => aborted.abort());
    let events: AsyncGenerator<RunEvent, void, undefined>;
    let stream: TakenLease | undefined;
    try {
      const { profile: principal } = await identifyPrincipal(
        event,
        dependencies.users,
        dependencies.settings?.identityGroupGrants,
      );
      const { id: runId } = parsePathParameters(STREAM_ROUTE, event.pathParameters ?? {});
      events = await openRunEvents(dependencies, principal, runId, { ...options, signal: aborted.signal });
      // After the visibility check (a 404 costs no slot); 429 when the principal holds its limit.
      stream = await takeEventStream(
        dependencies,
        principal,
        event.requestContext?.requestId ?? randomUUID(),
      );
    } catch (error) {
      const result = errorResponse(error);
      if ((result.statusCode ?? 500) >= 500) {
        dependencies.logger.error('run events refused', {
          requestId: event.requestContext?.requestId ?? 'unknown',
          status: result.statusCode,
          errorClass: nameErrorClass(error),
        });
      }
      response.setHeaders(result.statusCode ?? 500, { ...(result.headers as Record<string, string>) });
      response.write(typeof result.body === 'string' ? result.body : '');
      response.end();
      return;
    }
    response.setHeaders(200, { ...EVENT_STREAM_HEADERS });
    try {
      for await (const runEvent of events) {
        if (aborted.signal.aborted) break;
        response.write(formatServerSentEvent(runEvent));
      }
    } catch (error) {
      const fields = {
        requestId: event.requestContext?.requestId ?? 'unknown',
        errorClass: nameErrorClass(error),
      };
      // The client hung up: nobody reads what failed after, and it is not our failure.
      if (aborted.signal.aborted) dependencies.logger.warn('run events client gone', fields);
      else dependencies.logger.error('run events failed', fields);
    } finally {
      response.end();
      await releaseEventStream(dependencies, stream);
    }
  };
}
