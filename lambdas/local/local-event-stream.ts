import type { ServerResponse } from 'node:http';
import { CountersignError } from '../core/errors.js';
import { EVENT_STREAM_HEADERS, type EventStreamResponse } from '../handlers/http/event-stream.js';

/**
 * A node:http response as the event stream a streamed Lambda writes to: the local stand-in for
 * `awslambda.HttpResponseStream`. Writes after the client went away are dropped, as deployed.
 */
export function toEventStreamResponse(response: ServerResponse): EventStreamResponse {
  const ensureHeaders = (): void => {
    if (response.headersSent) return;
    response.writeHead(200, { ...EVENT_STREAM_HEADERS });
    response.flushHeaders();
  };
  return {
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
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
