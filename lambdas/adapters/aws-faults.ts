import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import { CountersignError, isCountersignError } from '../core/errors.js';
import { TEXTS } from '../core/texts.js';

// biome-ignore lint/suspicious/noExplicitAny: each service's client types its handlers differently; this passes them through untouched.
type NextHandler = (args: any) => Promise<any>;
type InitializeMiddleware = (next: NextHandler) => NextHandler;

/** The part of an AWS SDK v3 client (any service) the fault classifier attaches to. */
export interface ClassifiableClient {
  readonly middlewareStack: {
    add(
      middleware: InitializeMiddleware,
      options: { step: 'initialize'; name: string; override: boolean },
    ): void;
  };
}

const MIDDLEWARE_NAME = 'countersignTransientFaults';

/**
 * Whether an AWS SDK error is one that passes (throttling, a 5xx, a timeout, a dropped
 * connection): the SDK's own classification (`@smithy/core/retry`), which its retry strategy
 * uses too, so "transient" means here what it means to the SDK.
 *
 * @example
 * isTransientAwsFault(Object.assign(new Error('x'), { name: 'ThrottlingException' })); // true
 */
export function isTransientAwsFault(error: unknown): boolean {
  if (isCountersignError(error, 'unavailable')) return true;
  if (typeof error !== 'object' || error === null || isCountersignError(error)) return false;
  const candidate = error as Parameters<typeof isTransientError>[0];
  return isThrottlingError(candidate) || isTransientError(candidate) || isServerError(candidate);
}

/**
 * Makes a client's transient faults `CountersignError('unavailable')` once the SDK's own retries
 * are spent (the middleware sits at `initialize`, outside the retry loop): the core then tells a
 * fault that passes from a bug, the edge answers 503 and a step fails retryably. Any other
 * error (a failed condition, a missing resource) is passed on untouched.
 *
 * @example
 * surfaceTransientFaults(new DynamoDBClient({}));
 */
export function surfaceTransientFaults<Client extends ClassifiableClient>(client: Client): Client {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (!isTransientAwsFault(error) || isCountersignError(error)) throw error;
        throw new CountersignError('unavailable', TEXTS.serviceUnavailable, { cause: error });
      }
    },
    { step: 'initialize', name: MIDDLEWARE_NAME, override: true },
  );
  return client;
}
