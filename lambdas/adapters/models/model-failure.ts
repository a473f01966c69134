import { type ModelAttempts, ModelCallFailure } from '../../core/model.js';

/**
 * The one way a provider adapter reports a failure the same request would meet again (a
 * refusal, an unreadable reply): `model-failed` with a reason written here, never the
 * provider's own message (it can echo prompts, account ids or keys). The provider's error is
 * deliberately not attached as `cause`, so no logger can serialise it by accident.
 *
 * @example
 * throw modelFailed('Bedrock refused the request (ValidationException, HTTP 400).');
 */
export function modelFailed(reason: string, attempts: ModelAttempts = ONE_ATTEMPT): ModelCallFailure {
  return new ModelCallFailure(reason, { transient: false, attempts });
}

/**
 * A failure a later attempt may not meet: throttling or a provider outage past the adapter's
 * retries, or an endpoint that could not be reached. A run it fails can be redriven.
 *
 * @example
 * throw modelUnavailable('The model provider is throttling requests (HTTP 429); gave up after 4 attempts in 7 s.', { total: 4, throttled: 4 });
 */
export function modelUnavailable(reason: string, attempts: ModelAttempts): ModelCallFailure {
  return new ModelCallFailure(reason, { transient: true, attempts });
}

const ONE_ATTEMPT: ModelAttempts = { total: 1, throttled: 0 };

/** Reads a JSON value as a plain object, or `undefined` (a reply is never trusted to have a shape). */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
