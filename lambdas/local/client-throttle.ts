import { CountersignError } from '../core/errors.js';
import type { ThrottlingLimits } from '../core/limits.js';
import { type Clock, systemClock } from '../core/ports.js';

interface Bucket {
  tokens: number;
  refilledAt: number;
}

/** Buckets kept at most; the least recently seen client (whose bucket has refilled most) is forgotten first. */
const MAXIMUM_BUCKETS = 10_000;

/**
 * Token buckets per client, the local stand-in for the HTTP API's throttling: each client may
 * send `burstLimit` requests at once, then `rateLimit` per second. A client over its limit is
 * refused (429) while every other client keeps its own bucket.
 *
 * @example
 * const throttle = new ClientThrottle({ rateLimit: 25, burstLimit: 50 });
 * if (!throttle.take(clientKey)) respond429();
 */
export class ClientThrottle {
  private readonly buckets = new Map<string, Bucket>();
  private readonly limits: ThrottlingLimits;
  private readonly clock: Clock;

  public constructor(limits: ThrottlingLimits, clock: Clock = systemClock) {
    if (!(limits.rateLimit > 0) || !Number.isInteger(limits.burstLimit) || limits.burstLimit < 1) {
      throw new CountersignError(
        'configuration',
        `The local throttling needs a rate above 0 and a whole burst of at least 1, got ${JSON.stringify(limits)}.`,
      );
    }
    this.limits = limits;
    this.clock = clock;
  }

  /** Takes one token from the client's bucket; false when it is empty (the request is refused). */
  public take(clientKey: string): boolean {
    const now = this.clock.now().getTime();
    const bucket = this.buckets.get(clientKey) ?? { tokens: this.limits.burstLimit, refilledAt: now };
    const refill = (Math.max(0, now - bucket.refilledAt) / 1000) * this.limits.rateLimit;
    bucket.tokens = Math.min(this.limits.burstLimit, bucket.tokens + refill);
    bucket.refilledAt = now;
    // Re-inserted, so the map's order is least recently seen first.
    this.buckets.delete(clientKey);
    this.buckets.set(clientKey, bucket);
    this.forgetIdleClients();
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  private forgetIdleClients(): void {
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= MAXIMUM_BUCKETS) return;
      this.buckets.delete(key);
    }
  }
}
