import { CountersignError } from '../../core/errors.js';

/**
 * The one way a provider adapter reports a failure: `model-failed` with a reason written here,
 * never the provider's own message (it can echo prompts, account ids or keys). The provider's
 * error is deliberately not attached as `cause`, so no logger can serialise it by accident.
 *
 * @example
 * throw modelFailed('The model provider is throttling requests (HTTP 429).');
 */
export function modelFailed(reason: string): CountersignError {
  return new CountersignError('model-failed', reason);
}

/** Reads a JSON value as a plain object, or `undefined` (a reply is never trusted to have a shape). */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
