/**
 * When to retry a model call the provider refused for now (HTTP 429, 5xx, no connection), and
 * how long to wait: exponential backoff with full jitter (AWS Architecture Blog, "Exponential
 * Backoff and Jitter"), a `Retry-After` the provider sent winning over the computed delay,
 * bounded in attempts and in total time so a model turn stays inside its Lambda's timeout.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. @default 4 */
  readonly maxAttempts?: number;
  /** No retry starts later than this after the first attempt began. @default 45_000 */
  readonly maxElapsedMilliseconds?: number;
  /** The backoff's first ceiling; it doubles per retry. @default 1_000 */
  readonly baseDelayMilliseconds?: number;
  /** The largest computed delay. @default 16_000 */
  readonly maxDelayMilliseconds?: number;
}

export const DEFAULT_RETRY_POLICY: Required<RetryPolicy> = {
  maxAttempts: 4,
  maxElapsedMilliseconds: 45_000,
  baseDelayMilliseconds: 1_000,
  maxDelayMilliseconds: 16_000,
};

/** HTTP statuses worth another attempt: throttling and the server's own transient failures. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || (status >= 500 && status <= 599 && status !== 501);
}

/**
 * `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110, 10.2.3); `undefined`
 * when absent or unreadable.
 *
 * @example
 * parseRetryAfter('2', Date.now()) // 2000
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMilliseconds: number,
): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMilliseconds);
}

/**
 * The wait before retry number `retry` (1 for the first retry), or `undefined` when the
 * policy says stop: attempts spent, or the wait would end past the time bound.
 */
export function nextRetryDelay(input: {
  readonly policy: Required<RetryPolicy>;
  readonly retry: number;
  readonly elapsedMilliseconds: number;
  readonly retryAfterMilliseconds: number | undefined;
  readonly random: () => number;
}): number | undefined {
  const { policy, retry } = input;
  if (retry >= policy.maxAttempts) return undefined;
  const ceiling = Math.min(policy.maxDelayMilliseconds, policy.baseDelayMilliseconds * 2 ** (retry - 1));
  const delay = input.retryAfterMilliseconds ?? Math.round(input.random() * ceiling);
  if (input.elapsedMilliseconds + delay > policy.maxElapsedMilliseconds) return undefined;
  return delay;
}
