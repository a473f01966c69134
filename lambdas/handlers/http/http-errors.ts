import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { $ZodError } from 'zod/v4/core';
import { isTransientAwsFault } from '../../adapters/aws-faults.js';
import { CountersignError, type ErrorCode } from '../../core/errors.js';
import { formatSchemaIssue } from '../../core/schema-messages.js';
import { TEXTS } from '../../core/texts.js';

const STATUS_BY_CODE: Record<ErrorCode, number> = {
  'bad-request': 400,
  unauthenticated: 401,
  forbidden: 403,
  'not-found': 404,
  'stale-digest': 409,
  conflict: 409,
  gone: 410,
  'payload-too-large': 413,
  'too-many-requests': 429,
  'sealed-state-rejected': 500,
  'model-failed': 500,
  'model-unavailable': 500,
  'model-provider-failed': 502,
  'model-provider-unavailable': 503,
  'model-timeout': 504,
  'approval-timeout': 504,
  'tool-failed': 500,
  'webhook-failed': 500,
  unavailable: 503,
  configuration: 500,
  internal: 500,
};

const PLAINLY_SAID_SERVER_CODES: ReadonlySet<ErrorCode> = new Set([
  'sealed-state-rejected',
  'model-provider-failed',
  'model-provider-unavailable',
  'model-timeout',
  'unavailable',
]);

/** How long a client should wait before it sends a request that met a transient fault again. */
export const RETRY_AFTER_SECONDS = 2;

export const JSON_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

/** The HTTP status of an error code: the only place codes become statuses. */
export function statusOf(code: ErrorCode): number {
  return STATUS_BY_CODE[code];
}

/**
 * `{"error": {"code", "message"}}`. Only client-facing (4xx, `expose`) messages are passed on;
 * a 5xx says nothing about its cause. A transient AWS fault is a 503 with `Retry-After`, never
 * a 500, whether an adapter already named it `unavailable` or it reached the edge as the SDK threw it.
 */
export function errorResponse(error: unknown): APIGatewayProxyStructuredResultV2 {
  const known =
    error instanceof CountersignError
      ? error
      : isTransientAwsFault(error)
        ? new CountersignError('unavailable', TEXTS.serviceUnavailable)
        : undefined;
  const status = known ? statusOf(known.code) : 500;
  // A refused sealed state is an integrity failure, not the client's: 500, but said plainly. The
  // model's 502/503/504 say plainly that the provider failed (their texts are ours, never the provider's).
  const exposed = known?.expose === true && (status < 500 || PLAINLY_SAID_SERVER_CODES.has(known.code));
  const body = {
    error: {
      // Facts beside the message first, so none can stand in for the code or the message.
      ...(exposed ? known?.details : {}),
      code: exposed ? known.code : 'internal',
      message: exposed ? known.message : TEXTS.internalError,
      ...(exposed && known.field ? { field: known.field } : {}),
    },
  };
  // A quota's own wait (429), or a transient fault's: try again after a moment (503).
  const retryAfter = !exposed
    ? undefined
    : (known?.retryAfterSeconds ?? (known?.code === 'unavailable' ? RETRY_AFTER_SECONDS : undefined));
  return {
    statusCode: known && exposed ? status : 500,
    headers: { ...JSON_HEADERS, ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }) },
    body: JSON.stringify(body),
  };
}

/** A zod failure on client input as a 400 that names the first offending field. */
export function badRequestFrom(error: $ZodError, prefix: string): CountersignError {
  const { path, message } = formatSchemaIssue(error.issues[0], prefix);
  return new CountersignError('bad-request', `${path}: ${message}`, { field: path });
}

/**
 * The `{"error": {"code", "message"}}` body of a refusal the edge writes itself (no route, no
 * token, a body too large): the same shape as every other error a client reads.
 */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}
