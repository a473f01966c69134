/**
 * The one error root of countersign. Every error that may reach a client carries a `code`;
 * the HTTP status is chosen at the edge (see `lambdas/handlers/http/`), never here.
 *
 * `expose` says whether `message` was written for a client. Errors with `expose: false`
 * reach a client only as a generic message; their text goes to no log either unless it
 * was written to be safe.
 *
 * @example
 * throw new CountersignError('not-found', 'Run not found.');
 */
export type ErrorCode =
  | 'bad-request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'stale-digest'
  | 'conflict'
  | 'gone'
  | 'payload-too-large'
  /** A per-principal quota is used up (429, with `retryAfterSeconds`). */
  | 'too-many-requests'
  | 'sealed-state-rejected'
  | 'model-failed'
  /** The model provider throttled or failed past the adapter's retries: a later attempt may succeed. */
  | 'model-unavailable'
  /** The model provider failed on a synchronous generation request (502). */
  | 'model-provider-failed'
  /** The configuration's model provider is not available in this deployment (503). */
  | 'model-provider-unavailable'
  /** The model did not answer within a synchronous request's bound (504). */
  | 'model-timeout'
  /** An agent stopped waiting for a countersign answer before its run was answered (lambdas/agents/). */
  | 'approval-timeout'
  | 'tool-failed'
  /** An external run's webhook was not delivered this time; the workflow tries again. */
  | 'webhook-failed'
  /**
   * Something countersign depends on failed for now (a throttled or failing AWS service, a tool
   * whose backend said "try again"): 503 with `Retry-After`; a step that fails so is retried.
   */
  | 'unavailable'
  | 'configuration'
  | 'internal';

/**
 * Every error a countersign step throws is named `countersign.<code>` (the `CountersignError`
 * code): a failure named so carries a client-safe message, any other is shown as internal.
 */
export const STEP_ERROR_PREFIX = 'countersign.';

export class CountersignError extends Error {
  public readonly code: ErrorCode;
  public readonly expose: boolean;
  /** The request field the error is about, when there is one (`body.digest`). */
  public readonly field?: string;
  /**
   * Facts a client reads beside the message, written for it (a decision's `decisionOnRecord`);
   * sent only with an exposed message.
   */
  public readonly details?: Readonly<Record<string, string>>;
  /** When the client may try again, in seconds (a 429's `Retry-After`). */
  public readonly retryAfterSeconds?: number;

  public constructor(
    code: ErrorCode,
    message: string,
    options: {
      expose?: boolean;
      field?: string;
      cause?: unknown;
      details?: Readonly<Record<string, string>>;
      retryAfterSeconds?: number;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CountersignError';
    this.code = code;
    this.expose = options.expose ?? code !== 'internal';
    if (options.field !== undefined) this.field = options.field;
    if (options.details !== undefined) this.details = options.details;
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** True when `error` is a countersign error with the given code. */
export function isCountersignError(error: unknown, code?: ErrorCode): error is CountersignError {
  return error instanceof CountersignError && (code === undefined || error.code === code);
}

/** A class name a log or a card may show: a plain identifier, nothing that could carry text. */
const ERROR_CLASS_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;

/**
 * The class name of a thrown value, and nothing else: exception text is withheld (docs/previews.md)
 * because it can carry credentials ("Access denied for user x@host").
 *
 * The name is read from `error.name` (data an error sets, which survives minification),
 * never from `constructor.name` (a deployed bundle renames classes to one letter). A name that
 * is not a plain identifier (`DriverError: Access denied for user 'admin'@'10.0.0.1'`) is text,
 * not a class, and shows as `Error`.
 *
 * @example
 * nameErrorClass(Object.assign(new Error('x'), { name: 'PreviewTimeout' })) // 'PreviewTimeout'
 */
export function nameErrorClass(error: unknown): string {
  if (error instanceof Error) {
    const name: unknown = error.name;
    return typeof name === 'string' && ERROR_CLASS_NAME.test(name) ? name : 'Error';
  }
  return typeof error;
}
