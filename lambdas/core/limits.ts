/**
 * The request limits shared by the deployed construct (API Gateway stage throttling) and local
 * mode (the token bucket of the local HTTP server), so `npm start` refuses what AWS would.
 * Sized for an approval workload: people reading an inbox and deciding, scripts starting runs.
 */
export const THROTTLING_DEFAULTS = {
  /** Steady-state requests per second. */
  rateLimit: 50,
  /** Requests that may arrive at once above the steady rate. */
  burstLimit: 100,
} as const;

/** Rate and burst of a throttle: a token bucket of `burstLimit` tokens refilled at `rateLimit` per second. */
export interface ThrottlingLimits {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/** How long an ended run (record, sealed state, closed card) is kept before DynamoDB TTL removes it. */
export const ENDED_RUN_RETENTION_DAYS_DEFAULT = 90;

/** The longest run input (`POST /runs`); docs/runbook.md, "Work per request", lists every such bound. */
export const MAXIMUM_RUN_INPUT_CHARACTERS = 100_000;

/** The longest bearer token the events endpoint considers before verifying anything. */
export const MAXIMUM_BEARER_TOKEN_LENGTH = 8192;

const COMPACT_JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The bearer token of an `Authorization` header when it has the shape of a compact JWT, else
 * undefined. A pure string check, so an endpoint can refuse a request without a plausible token
 * before it builds clients, fetches keys or verifies a signature.
 *
 * @example
 * readBearerToken('Bearer aaa.bbb.ccc'); // 'aaa.bbb.ccc'
 * readBearerToken('Basic dXNlcg=='); // undefined
 */
export function readBearerToken(header: string | undefined): string | undefined {
  // The length first, so an oversized header costs no regular expression.
  if (header === undefined || header.length > MAXIMUM_BEARER_TOKEN_LENGTH + 64) return undefined;
  const token = /^Bearer +([^\s]+) *$/i.exec(header)?.[1];
  if (token === undefined || token.length > MAXIMUM_BEARER_TOKEN_LENGTH) return undefined;
  return COMPACT_JWT.test(token) ? token : undefined;
}
