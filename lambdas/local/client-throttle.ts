import { createHash } from 'node:crypto';
import { CountersignError } from '../core/errors.js';
import type { ThrottlingLimits } from '../core/limits.js';
import { type Clock, systemClock } from '../core/ports.js';

interface Bucket {
  tokens: number;
  refilledAt: number;
}

/** Buckets kept at most; the least recently seen client (whose bucket has refilled most) is forgotten first. */
const MAXIMUM_BUCKETS = 10_000;

/** What is known of who sent a request, as {@link throttleClientKey} reads it. */
export interface RequestingClient {
  /** The `sub` of a bearer token that verified. */
  readonly subject?: string;
  /** The bearer token as `readBearerToken` reads it (scheme in any case, spaces around it dropped). */
  readonly bearerToken?: string;
  /** The peer address. */
  readonly address?: string;
}

/**
 * Who a request counts against: the verified principal (`sub`), so the same person is one
 * client whichever token they hold or however its header is spelt; else the bearer token as
 * read (hashed: the map never holds a token), so re-spacing or re-casing `Bearer` is no new
 * client; else the address. Every local client shares 127.0.0.1, so the token tells them apart.
 *
 * @example
 * throttleClientKey({ subject: 'approver', bearerToken: 'aaa.bbb.ccc' }); // 'principal:approver'
 */
export function throttleClientKey(client: RequestingClient): string {
  if (client.subject !== undefined) return `principal:${client.subject}`;
  if (client.bearerToken !== undefined) {
    return `token:${createHash('sha256').update(client.bearerToken).digest('base64url')}`;
  }
  return `address:${client.address ?? 'unknown'}`;
}

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
