import { describe, expect, it } from 'vitest';
import {
  signWebhook,
  verifyWebhookSignature,
  WEBHOOK_TOLERANCE_SECONDS,
} from '../../../lambdas/core/external-runs/webhook-signature.js';

const SECRET = 'whsec_test';
const BODY = '{"type":"external_run.answered"}';
const T = 1_767_225_600;
// `printf '%s' '1767225600.{"type":"external_run.answered"}' | openssl dgst -sha256 -hmac whsec_test`
const OPENSSL_HMAC = 'c0550c751a562d96fb84b8291bf622ab8f3e638ec3360ce522c1666e937f7440';
const at = (seconds: number) => new Date(seconds * 1000);

describe('webhook signatures', () => {
  it('signs `<timestamp>.<body>` with HMAC-SHA256 as OpenSSL computes it', () => {
    // Act
    const header = signWebhook({ secret: SECRET, body: BODY, timestampSeconds: T });

    // Assess
    expect(header).toBe(`t=${T},v1=${OPENSSL_HMAC}`);
  });

  it('verifies its own signature within the tolerance, either side of the receiver’s clock', () => {
    // Prepare
    const header = signWebhook({ secret: SECRET, body: BODY, timestampSeconds: T });

    // Act
    const verdicts = [-WEBHOOK_TOLERANCE_SECONDS, 0, WEBHOOK_TOLERANCE_SECONDS].map(
      (skew) => verifyWebhookSignature({ secret: SECRET, body: BODY, header, now: at(T + skew) }).kind,
    );

    // Assess
    expect(verdicts).toEqual(['verified', 'verified', 'verified']);
  });

  it.each([
    ['another secret', { secret: 'whsec_other' }, 'mismatch'],
    ['a changed body', { body: BODY.replace('answered', 'approved') }, 'mismatch'],
    ['a body with a byte more', { body: `${BODY} ` }, 'mismatch'],
    ['a replay after the tolerance', { now: at(T + WEBHOOK_TOLERANCE_SECONDS + 1) }, 'stale'],
    ['a timestamp from the future', { now: at(T - WEBHOOK_TOLERANCE_SECONDS - 1) }, 'stale'],
  ])('refuses %s', (_case, change, reason) => {
    // Prepare
    const header = signWebhook({ secret: SECRET, body: BODY, timestampSeconds: T });

    // Act
    const verdict = verifyWebhookSignature({ secret: SECRET, body: BODY, header, now: at(T), ...change });

    // Assess
    expect(verdict).toEqual({ kind: 'refused', reason });
  });

  it('refuses a replayed signature under a timestamp it was not made for', () => {
    // Prepare: the signature of T, sent with a fresh timestamp
    const header = `t=${T + 60},v1=${OPENSSL_HMAC}`;

    // Act
    const verdict = verifyWebhookSignature({ secret: SECRET, body: BODY, header, now: at(T + 60) });

    // Assess
    expect(verdict).toEqual({ kind: 'refused', reason: 'mismatch' });
  });

  it('accepts any one of several v1 signatures, as while a secret is rotated', () => {
    // Prepare
    const header = `t=${T},v1=${'0'.repeat(64)},v1=${OPENSSL_HMAC},v0=ignored`;

    // Act
    const verdict = verifyWebhookSignature({ secret: SECRET, body: BODY, header, now: at(T) });

    // Assess
    expect(verdict).toEqual({ kind: 'verified', timestampSeconds: T });
  });

  it.each([
    ['no header', undefined],
    ['no timestamp', `v1=${OPENSSL_HMAC}`],
    ['no signature', `t=${T}`],
    ['a signature that is not hex', `t=${T},v1=${'z'.repeat(64)}`],
    ['a header of 3,000 characters', `t=${T},v1=${'a'.repeat(3_000)}`],
  ])('refuses %s as malformed', (_case, header) => {
    // Act
    const verdict = verifyWebhookSignature({ secret: SECRET, body: BODY, header, now: at(T) });

    // Assess
    expect(verdict).toEqual({ kind: 'refused', reason: 'malformed' });
  });
});
