import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  callOutbound,
  createOutboundFetch,
  MAX_SAME_ORIGIN_REDIRECTS,
  type OutboundPolicy,
} from '../../../lambdas/adapters/outbound/outbound-fetch.js';
import { type MisbehavingServer, startMisbehavingServer } from '../../support/misbehaving-server.js';

const MiB = 1024 * 1024;
const policy: OutboundPolicy = { redirects: 'same-origin', maxResponseBytes: MiB };

let upstream: MisbehavingServer;
let elsewhere: MisbehavingServer;

beforeAll(async () => {
  [upstream, elsewhere] = await Promise.all([startMisbehavingServer(), startMisbehavingServer()]);
});

afterAll(async () => {
  await Promise.all([upstream.stop(), elsewhere.stop()]);
});

beforeEach(() => {
  upstream.received.length = 0;
  elsewhere.received.length = 0;
  upstream.behave({ kind: 'answer', body: '{"ok":true}' });
  elsewhere.behave({ kind: 'answer', body: '{"stolen":true}' });
});

/** A POST carrying what must not leave its origin: a prompt and a key. */
function postSecret(
  url: string,
  overrides: Partial<OutboundPolicy> = {},
  signal = AbortSignal.timeout(5_000),
) {
  return callOutbound(
    {
      url,
      method: 'POST',
      headers: { authorization: 'Bearer sk-secret', 'content-type': 'application/json' },
      body: '{"prompt":"the skills and the prompt"}',
      signal,
    },
    { ...policy, ...overrides },
  );
}

describe('the outbound policy: redirects', () => {
  it.each([301, 302, 303, 307, 308] as const)(
    'refuses a %i to another origin; nothing reaches it',
    async (status) => {
      // Prepare
      upstream.behave({ kind: 'redirect', status, location: `${elsewhere.origin}/v1/chat/completions` });

      // Act
      const answer = await postSecret(`${upstream.origin}/v1/chat/completions`);

      // Assess
      expect(answer).toEqual({ kind: 'refused', reason: 'redirect-refused', target: elsewhere.origin });
      expect(upstream.received).toHaveLength(1);
      expect(elsewhere.received).toEqual([]);
    },
  );

  it('follows a 307 within the origin, sending the same body again', async () => {
    // Prepare
    upstream.behave({ kind: 'redirect', status: 307, location: '/v2/chat' }, '/v1/chat');
    upstream.behave({ kind: 'answer', body: '{"moved":true}' }, '/v2/chat');

    // Act
    const answer = await postSecret(`${upstream.origin}/v1/chat`);

    // Assess
    expect(answer).toMatchObject({ kind: 'answered', status: 200 });
    expect(upstream.received.map((request) => [request.method, request.url, request.body])).toEqual([
      ['POST', '/v1/chat', '{"prompt":"the skills and the prompt"}'],
      ['POST', '/v2/chat', '{"prompt":"the skills and the prompt"}'],
    ]);
  });

  it('refuses a same-origin redirect when the policy follows none', async () => {
    // Prepare
    upstream.behave({ kind: 'redirect', status: 308, location: '/other' }, '/mcp');

    // Act
    const answer = await postSecret(`${upstream.origin}/mcp`, { redirects: 'none' });

    // Assess
    expect(answer).toEqual({ kind: 'refused', reason: 'redirect-refused', target: upstream.origin });
    expect(upstream.received.map((request) => request.url)).toEqual(['/mcp']);
  });

  it(`stops a same-origin redirect loop after ${MAX_SAME_ORIGIN_REDIRECTS} redirects`, async () => {
    // Prepare
    upstream.behave({ kind: 'redirect', status: 307, location: '/loop' });

    // Act
    const answer = await postSecret(`${upstream.origin}/loop`);

    // Assess
    expect(answer).toEqual({ kind: 'refused', reason: 'redirect-refused', target: upstream.origin });
    expect(upstream.received).toHaveLength(MAX_SAME_ORIGIN_REDIRECTS + 1);
  });

  it('checks every URL against the allow-list before a request goes out', async () => {
    // Prepare
    const onlyElsewhere = (url: URL) => url.origin === elsewhere.origin;

    // Act
    const answer = await postSecret(`${upstream.origin}/x`, { allowsUrl: onlyElsewhere });

    // Assess
    expect(answer).toEqual({ kind: 'refused', reason: 'url-refused', target: upstream.origin });
    expect(upstream.received).toEqual([]);
  });
});

describe('the outbound policy: size, decompression included', () => {
  it.each([
    ['a plain 20 MiB body with its length declared', { encoding: 'identity', declareLength: true }],
    ['a plain 20 MiB body sent in chunks', { encoding: 'identity', declareLength: false }],
  ] as const)('refuses %s past a 1 MiB limit', async (_case, shape) => {
    // Prepare
    upstream.behave({ kind: 'bloat', bytes: 20 * MiB, ...shape });

    // Act
    const answer = await postSecret(`${upstream.origin}/big`);

    // Assess
    expect(answer).toEqual({ kind: 'refused', reason: 'too-large' });
  });

  it.each(['gzip', 'br'] as const)(
    'stops a %s bomb (100 MiB once decoded) at the limit, holding about the limit in memory',
    async (encoding) => {
      // Prepare
      upstream.behave({ kind: 'bloat', bytes: 100 * MiB, encoding, declareLength: true });
      const before = process.memoryUsage().arrayBuffers;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().arrayBuffers);
      }, 1);

      // Act
      const answer = await postSecret(`${upstream.origin}/bomb`);
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);

      // Assess: refused, and the body was never decoded whole (it would have held 100 MiB).
      expect(answer).toEqual({ kind: 'refused', reason: 'too-large' });
      expect(peak - before).toBeLessThan(32 * MiB);
    },
  );

  it('reads a body up to the limit whole', async () => {
    // Prepare
    upstream.behave({ kind: 'bloat', bytes: MiB, encoding: 'gzip', declareLength: false });

    // Act
    const answer = await postSecret(`${upstream.origin}/exact`);

    // Assess
    expect(answer.kind === 'answered' ? answer.body.byteLength : answer.reason).toBe(MiB);
  });

  it('gives a fetch caller (the MCP transport) a body that errors at the limit', async () => {
    // Prepare
    upstream.behave({ kind: 'bloat', bytes: 8 * MiB, encoding: 'gzip', declareLength: false });
    const outboundFetch = createOutboundFetch(policy);

    // Act
    const response = await outboundFetch(`${upstream.origin}/stream`, { signal: AbortSignal.timeout(5_000) });
    const reading = response.arrayBuffer();

    // Assess
    expect(response.status).toBe(200);
    await expect(reading).rejects.toMatchObject({ name: 'OutboundResponseTooLarge' });
  });
});

describe('the outbound policy: one deadline', () => {
  it('ends a server that never answers at the caller deadline', async () => {
    // Prepare
    upstream.behave({ kind: 'hang' });

    // Act
    const answer = await postSecret(`${upstream.origin}/hang`, {}, AbortSignal.timeout(300));

    // Assess
    expect(answer).toEqual({ kind: 'refused', reason: 'timed-out' });
  });

  it('ends a body that trickles one byte at a time at the same deadline', async () => {
    // Prepare
    upstream.behave({ kind: 'trickle', intervalMilliseconds: 50, bytes: 1_000 });

    // Act
    const answer = await postSecret(`${upstream.origin}/slow`, {}, AbortSignal.timeout(400));

    // Assess
    expect(answer).toEqual({ kind: 'refused', reason: 'timed-out' });
  });

  it('tells a caller that cancelled from a deadline, and an unreachable server from both', async () => {
    // Prepare
    upstream.behave({ kind: 'hang' });
    const caller = new AbortController();
    setTimeout(() => caller.abort(new Error('the request ended')), 50);
    const closed = await startMisbehavingServer();
    await closed.stop();

    // Act
    const cancelled = await postSecret(`${upstream.origin}/hang`, {}, caller.signal);
    const unreachable = await postSecret(`${closed.origin}/gone`);

    // Assess
    expect(cancelled).toEqual({ kind: 'refused', reason: 'cancelled' });
    expect(unreachable).toEqual({ kind: 'refused', reason: 'unreachable' });
  });
});
