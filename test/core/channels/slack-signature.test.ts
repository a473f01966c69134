import { describe, expect, it } from 'vitest';
import { verifySlackSignature } from '../../../lambdas/core/channels/slack-signature.js';

// Slack's published example ("Verifying requests from Slack"): a slash command's raw body, its
// timestamp, the app's signing secret and the signature Slack sent. A check that agrees with this
// builds the base string exactly as Slack does, which a round trip through our own signer cannot show.
const SLACK_EXAMPLE = {
  signingSecret: '8f742231b10e8888abcd99yyyzzz85a5',
  timestamp: '1531420618',
  body: 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
};

const at = (seconds: number) => new Date(seconds * 1000);

function check(
  overrides: Partial<{
    signingSecret: string;
    timestamp: string | undefined;
    signature: string | undefined;
    body: string;
    now: Date;
  }> = {},
) {
  const input = { ...SLACK_EXAMPLE, now: at(Number(SLACK_EXAMPLE.timestamp)), ...overrides };
  let secretReads = 0;
  const verifying = verifySlackSignature({
    signingSecret: async () => {
      secretReads += 1;
      return input.signingSecret;
    },
    timestamp: input.timestamp,
    signature: input.signature,
    rawBody: new TextEncoder().encode(input.body),
    now: input.now,
  });
  return verifying.then((outcome) => ({ outcome, secretReads }));
}

describe('verifySlackSignature', () => {
  it("accepts Slack's published example, signed v0 over `v0:<timestamp>:<raw body>`", async () => {
    // Act
    const { outcome } = await check();

    // Assess
    expect(outcome).toEqual({
      kind: 'valid',
      timestampSeconds: 1531420618,
      signature: SLACK_EXAMPLE.signature.slice(3),
    });
  });

  it.each([
    ['a byte of the body changed', { body: SLACK_EXAMPLE.body.replace('roadrunner', 'roadrunnes') }],
    ['another signing secret', { signingSecret: '8f742231b10e8888abcd99yyyzzz85a6' }],
    ['another timestamp with the same signature', { timestamp: '1531420619' }],
    ['the body with its form encoding decoded', { body: decodeURIComponent(SLACK_EXAMPLE.body) }],
  ])('refuses it as forged when %s', async (_case, overrides) => {
    const { outcome } = await check(overrides);
    expect(outcome).toEqual({ kind: 'forged' });
  });

  it.each([
    ['5 minutes and 1 second old', 1531420618 + 301],
    ['5 minutes and 1 second ahead', 1531420618 - 301],
  ])('refuses a request %s as expired, without reading the secret', async (_case, nowSeconds) => {
    const { outcome, secretReads } = await check({ now: at(nowSeconds) });
    expect(outcome).toEqual({ kind: 'expired' });
    expect(secretReads).toBe(0);
  });

  it('accepts a request exactly 5 minutes old', async () => {
    const { outcome } = await check({ now: at(1531420618 + 300) });
    expect(outcome.kind).toBe('valid');
  });

  it.each([
    ['no signature', { signature: undefined }],
    ['no timestamp', { timestamp: undefined }],
    ['another version', { signature: SLACK_EXAMPLE.signature.replace('v0=', 'v1=') }],
    ['upper-case hex', { signature: SLACK_EXAMPLE.signature.toUpperCase().replace('V0=', 'v0=') }],
    ['a short signature', { signature: SLACK_EXAMPLE.signature.slice(0, -2) }],
    ['a timestamp that is no number', { timestamp: '1531420618.5' }],
  ])('refuses %s as malformed, without reading the secret', async (_case, overrides) => {
    const { outcome, secretReads } = await check(overrides);
    expect(outcome).toEqual({ kind: 'malformed' });
    expect(secretReads).toBe(0);
  });
});
