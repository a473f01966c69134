import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signature scheme of countersign's webhooks, documented in docs/external-agents.md and
 * shaped like Stripe's and Slack's: HMAC-SHA256, keyed with the client's signing secret (its
 * UTF-8 bytes), over `<timestamp>.<body>` (the exact bytes sent), sent in one header as
 * `t=<unix seconds>,v1=<lower-case hex>`. The timestamp is signed, so a receiver that refuses
 * old ones (five minutes by default) cannot be replayed to later. HMAC and the constant-time
 * comparison are Node's own (OpenSSL); nothing here is a format of our own beyond the header.
 */
export const WEBHOOK_SIGNATURE_HEADER = 'countersign-signature';
/** How old a signed timestamp a receiver accepts by default (either way: clocks drift). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

const SIGNATURE_VERSION = 'v1';

/**
 * The header value for one delivery.
 *
 * @example
 * signWebhook({ secret, body, timestampSeconds: 1767225600 }); // 't=1767225600,v1=5f0c…'
 */
export function signWebhook(input: { secret: string; body: string; timestampSeconds: number }): string {
  return `t=${input.timestampSeconds},${SIGNATURE_VERSION}=${hmacHex(input.secret, input.timestampSeconds, input.body)}`;
}

export type WebhookVerification =
  | { kind: 'verified'; timestampSeconds: number }
  /** `malformed`: no usable header; `stale`: outside the tolerance; `mismatch`: no signature matches. */
  | { kind: 'refused'; reason: 'malformed' | 'stale' | 'mismatch' };

/**
 * What a receiver runs on every delivery, before it reads the body: the header parses, its
 * timestamp is within the tolerance of `now`, and one of its `v1` signatures (several while a
 * secret is rotated) is the HMAC of the raw body under `secret`, compared in constant time.
 *
 * @example
 * const verdict = verifyWebhookSignature({ secret, body: rawBody, header: request.headers['countersign-signature'] });
 * if (verdict.kind !== 'verified') return response.status(400).end();
 */
export function verifyWebhookSignature(input: {
  secret: string;
  /** The body exactly as received (before any JSON parsing). */
  body: string;
  header: string | undefined;
  /** @default - the system time */
  now?: Date;
  /** @default WEBHOOK_TOLERANCE_SECONDS */
  toleranceSeconds?: number;
}): WebhookVerification {
  const parsed = parseSignatureHeader(input.header);
  if (parsed === undefined) return { kind: 'refused', reason: 'malformed' };
  const nowSeconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const tolerance = input.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (Math.abs(nowSeconds - parsed.timestampSeconds) > tolerance) return { kind: 'refused', reason: 'stale' };
  const expected = Buffer.from(hmacHex(input.secret, parsed.timestampSeconds, input.body), 'hex');
  const matches = parsed.signatures.some((signature) => {
    const given = Buffer.from(signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches
    ? { kind: 'verified', timestampSeconds: parsed.timestampSeconds }
    : { kind: 'refused', reason: 'mismatch' };
}

function hmacHex(secret: string, timestampSeconds: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.${body}`, 'utf8').digest('hex');
}

/** `t=<digits>,v1=<hex>[,v1=<hex>…]`; other schemes' entries are ignored, as Stripe's receivers do. */
function parseSignatureHeader(
  header: string | undefined,
): { timestampSeconds: number; signatures: string[] } | undefined {
  if (header === undefined || header.length > 2_000) return undefined;
  let timestampSeconds: number | undefined;
  const signatures: string[] = [];
  for (const entry of header.split(',')) {
    const [name, value = ''] = entry.trim().split('=', 2);
    if (name === 't' && /^\d{1,12}$/.test(value)) timestampSeconds = Number(value);
    if (name === SIGNATURE_VERSION && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  return timestampSeconds === undefined || signatures.length === 0
    ? undefined
    : { timestampSeconds, signatures };
}
