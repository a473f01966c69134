import { TEXTS } from '../../core/texts.js';
import { errorBody, JSON_HEADERS } from './http-errors.js';

/**
 * Where a streamed response goes: a Lambda response stream deployed, or the local HTTP server's
 * response. `setHeaders` comes first or not at all (then 200 and the SSE headers).
 */
export interface EventStreamResponse {
  setHeaders(statusCode: number, headers: Record<string, string>): void;
  write(chunk: string): void;
  end(): void;
  /** Called once when the response is over, also when the client went away. */
  onClose(callback: () => void): void;
}

/**
 * The headers of the event stream. `text/event-stream` and `nosniff` keep a browser from
 * reading it as a page: every value in it is JSON, and run output is untrusted text.
 */
export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-accel-buffering': 'no',
};

/**
 * A refusal the edge writes itself, in the API's error shape: deployed (the function URL) and
 * locally (the local HTTP server), the same status, headers and body. A 401 says `Bearer`.
 *
 * @example
 * sendErrorResponse(response, 401, 'unauthenticated', TEXTS.bearerTokenInvalid);
 */
export function sendErrorResponse(
  response: EventStreamResponse,
  statusCode: number,
  code: string,
  message: string,
): void {
  response.setHeaders(statusCode, {
    ...JSON_HEADERS,
    ...(statusCode === 401 ? { 'www-authenticate': 'Bearer' } : {}),
  });
  response.write(errorBody(code, message));
  response.end();
}

/** The 500 that says nothing: its cause goes to the log as a class name only. */
export function sendInternalError(response: EventStreamResponse): void {
  sendErrorResponse(response, 500, 'internal', TEXTS.internalError);
}
