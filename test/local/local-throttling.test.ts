import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THROTTLING_DEFAULTS } from '../../lambdas/core/limits.js';
import type { Clock } from '../../lambdas/core/ports.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { ClientThrottle, throttleClientKey } from '../../lambdas/local/client-throttle.js';
import { type LocalHttpEvent, LocalHttpServer } from '../../lambdas/local/local-http-server.js';
import { LocalJwtIssuer } from '../../lambdas/local/local-jwt-issuer.js';
import { removeTestData, startTestRuntime, type TestRuntime } from '../support/local-runtime.js';

/** A clock that moves only when told: the buckets refill by exactly what the test says. */
function manualClock(start = Date.parse('2026-01-01T00:00:00Z')): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => new Date(now),
    advance(ms) {
      now += ms;
    },
  };
}

describe('ClientThrottle', () => {
  it('serves a burst, refuses the next request and refills at the rate, per client', () => {
    // Prepare
    const clock = manualClock();
    const throttle = new ClientThrottle({ rateLimit: 2, burstLimit: 3 }, clock);

    // Act
    const burst = [throttle.take('a'), throttle.take('a'), throttle.take('a'), throttle.take('a')];
    const other = throttle.take('b');
    clock.advance(500);
    const afterHalfSecond = [throttle.take('a'), throttle.take('a')];

    // Assess
    expect(burst).toEqual([true, true, true, false]);
    expect(other).toBe(true);
    expect(afterHalfSecond).toEqual([true, false]);
  });

  it('keys on the verified principal, else the token as read, else the address', () => {
    // Act
    const keys = [
      throttleClientKey({ subject: 'ana', bearerToken: 'a.b.c', address: '127.0.0.1' }),
      throttleClientKey({ subject: 'ana', bearerToken: 'x.y.z' }),
      throttleClientKey({ bearerToken: 'a.b.c', address: '127.0.0.1' }),
      throttleClientKey({ bearerToken: 'a.b.c', address: '10.0.0.9' }),
      throttleClientKey({ address: '127.0.0.1' }),
    ];

    // Assess
    expect(keys[0]).toBe('principal:ana');
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).toMatch(/^token:/);
    expect(keys[2]).not.toContain('a.b.c');
    expect(keys[3]).toBe(keys[2]);
    expect(keys[4]).toBe('address:127.0.0.1');
  });

  it('refuses limits that could never serve a request', () => {
    // Act and assess
    expect(() => new ClientThrottle({ rateLimit: 0, burstLimit: 1 })).toThrow(/rate above 0/);
    expect(() => new ClientThrottle({ rateLimit: 1, burstLimit: 0.5 })).toThrow(/burst of at least 1/);
  });
});

describe('the local HTTP server at the deployed throttling defaults', () => {
  let keysDirectory: string;
  let server: LocalHttpServer;
  let baseUrl: string;
  let clock: ReturnType<typeof manualClock>;
  let handled = 0;
  let issuer: LocalJwtIssuer;
  const tokenOf = (sub: string) => issuer.issue({ sub, name: sub, groups: [] }, { expiresInSeconds: 3600 });

  beforeAll(async () => {
    keysDirectory = await mkdtemp(path.join(tmpdir(), 'countersign-throttle-'));
    clock = manualClock();
    issuer = await LocalJwtIssuer.open({ keysDirectory, clock });
    server = new LocalHttpServer({
      port: 0,
      verifier: issuer,
      clock,
      throttling: THROTTLING_DEFAULTS,
      routes: [
        {
          method: 'GET',
          path: '/inbox',
          authentication: 'none',
          handler: async (_event: LocalHttpEvent) => {
            handled += 1;
            return { statusCode: 200, body: '{}' };
          },
        },
      ],
    });
    ({ url: baseUrl } = await server.start());
  });

  afterAll(async () => {
    await server.stop();
    await rm(keysDirectory, { recursive: true, force: true });
  });

  const get = (authorization: string) =>
    fetch(`${baseUrl}/inbox`, { headers: { authorization } }).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as { error?: { code: string; message: string } },
    }));

  it('answers 429 past the burst to that client only, before the handler runs, and serves it again after a second', async () => {
    // Prepare
    const handledBefore = handled;
    const [one, two] = [await tokenOf('one'), await tokenOf('two')];

    // Act
    const burst = [];
    for (let index = 0; index < THROTTLING_DEFAULTS.burstLimit; index += 1)
      burst.push(await get(`Bearer ${one}`));
    const over = await get(`Bearer ${one}`);
    const otherClient = await get(`Bearer ${two}`);
    clock.advance(1000);
    const refilled = [];
    for (let index = 0; index <= THROTTLING_DEFAULTS.rateLimit; index += 1)
      refilled.push(await get(`Bearer ${one}`));

    // Assess
    expect(burst.every((answer) => answer.status === 200)).toBe(true);
    expect(over).toEqual({
      status: 429,
      body: { error: { code: 'too-many-requests', message: TEXTS.tooManyRequests } },
    });
    expect(otherClient.status).toBe(200);
    expect(refilled.slice(0, -1).every((answer) => answer.status === 200)).toBe(true);
    expect(refilled.at(-1)?.status).toBe(429);
    // The refused requests never reached the handler.
    expect(handled - handledBefore).toBe(THROTTLING_DEFAULTS.burstLimit + 1 + THROTTLING_DEFAULTS.rateLimit);
  });

  // Issue #20 item 6: the bucket was keyed on the raw header, so each respelling was a new client.
  it.each([
    {
      case: 'the same token with other spacing and case',
      headers: async () => {
        const token = await tokenOf('spacing');
        return { spent: `Bearer ${token}`, respelt: [`bearer   ${token}  `, `BEARER ${token}`] };
      },
    },
    {
      case: 'another token of the same principal',
      headers: async () => ({
        spent: `Bearer ${await tokenOf('person')}`,
        respelt: [`Bearer ${await tokenOf('person')}`],
      }),
    },
    {
      case: 'a token that does not verify, respelt',
      headers: async () => ({
        spent: 'Bearer aaa.bbb.ccc',
        respelt: ['bearer  aaa.bbb.ccc', 'BEARER aaa.bbb.ccc '],
      }),
    },
  ])('counts $case as the client that spent the burst', async ({ headers }) => {
    // Prepare
    const { spent, respelt } = await headers();
    for (let index = 0; index < THROTTLING_DEFAULTS.burstLimit; index += 1) await get(spent);

    // Act
    const statuses = [];
    for (const authorization of respelt) statuses.push((await get(authorization)).status);

    // Assess
    expect(statuses).toEqual(respelt.map(() => 429));
  });
});

describe('local mode throttles like the deployed API', () => {
  let runtime: TestRuntime;

  beforeAll(async () => {
    // A tiny burst and a rate that refills nothing during the test: what is served is exact.
    runtime = await startTestRuntime({ throttling: { rateLimit: 0.001, burstLimit: 3 } });
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  it('refuses a client over the limit with 429 and keeps serving the others', async () => {
    // Act
    const approver = [];
    for (let index = 0; index < 4; index += 1) {
      approver.push(await runtime.client('approver').listInbox());
    }
    const otherApprover = await runtime.client('ops-approver').listInbox();
    const pageShell = await runtime.client().getInboxPage();

    // Assess
    expect(approver.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    expect(approver[3]?.body).toEqual({
      error: { code: 'too-many-requests', message: TEXTS.tooManyRequests },
    });
    expect(otherApprover.status).toBe(200);
    expect(pageShell.status).toBe(200);
  });
});
