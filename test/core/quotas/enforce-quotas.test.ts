import { describe, expect, it } from 'vitest';
import { InMemoryQuotaStore } from '../../../lambdas/adapters/memory/in-memory-quota-store.js';
import type { Metrics } from '../../../lambdas/core/ports.js';
import {
  EVENT_STREAM_LEASE_SECONDS,
  enforceCompletionQuota,
  releaseEventStream,
  takeEventStream,
  WAITING_RUNS_RETRY_AFTER_SECONDS,
} from '../../../lambdas/core/quotas/enforce-quotas.js';
import type { PrincipalQuotas } from '../../../lambdas/core/quotas/principal-quotas.js';
import type { QuotaStore } from '../../../lambdas/core/quotas/quota-store.js';
import { startRun } from '../../../lambdas/core/runs/start-run.js';
import {
  createHarness,
  OWNER,
  person,
  refusalOf,
  startPausedRun,
  type UseCaseHarness,
} from '../runs/use-case-harness.js';

const QUOTAS: PrincipalQuotas = {
  runsStartedPerMinute: 3,
  waitingRuns: 2,
  openEventStreams: 2,
  completionsPerMinute: 2,
};

/** Every metric counted, with its dimensions. */
function recordingMetrics(): Metrics & {
  counted: Array<{ name: string; dimensions?: Record<string, string> }>;
} {
  const counted: Array<{ name: string; dimensions?: Record<string, string> }> = [];
  return {
    counted,
    count(name, _value, dimensions) {
      counted.push({ name, ...(dimensions ? { dimensions } : {}) });
    },
    observe() {},
  };
}

/** A harness whose quotas are counted in memory, at the limits of {@link QUOTAS}, and store calls counted. */
function quotaHarness(configuration: Parameters<typeof createHarness>[0] = {}) {
  const harness = createHarness({
    users: [OWNER, person('other', { grants: ['agent_run'] })],
    ...configuration,
  });
  const store = new InMemoryQuotaStore();
  const calls: string[] = [];
  const quotas = new Proxy(store, {
    get(target, property: keyof QuotaStore) {
      const member = target[property];
      if (typeof member !== 'function') return member;
      return (...parameters: unknown[]) => {
        calls.push(property);
        return (member as (...given: unknown[]) => unknown).apply(target, parameters);
      };
    },
  });
  const metrics = recordingMetrics();
  harness.dependencies.quotas = quotas;
  harness.dependencies.metrics = metrics;
  harness.dependencies.settings = { ...harness.dependencies.settings, principalQuotas: QUOTAS };
  return { harness, calls, metrics };
}

function start(harness: UseCaseHarness, owner = OWNER) {
  return startRun(
    harness.dependencies,
    owner,
    { configurationId: 'pages', input: 'What is on page 12?' },
    'user-record',
  );
}

describe('the runs-started quota', () => {
  it('lets a principal start the limit per minute, then answers 429 with the seconds left in the window', async () => {
    // Prepare
    const { harness, metrics } = quotaHarness();
    harness.clock.advance(15_000); // 15 s into the minute

    // Act
    for (let count = 0; count < QUOTAS.runsStartedPerMinute; count += 1) await start(harness);
    const refusal = await refusalOf(start(harness));
    const other = await start(harness, person('other', { grants: ['agent_run'] }));
    harness.clock.advance(45_000);
    const nextMinute = await start(harness);

    // Assess
    expect(refusal.code).toBe('too-many-requests');
    expect(refusal.retryAfterSeconds).toBe(45);
    expect(refusal.message).toBe('You started as many runs as you may this minute. Try again in 45 s.');
    expect(metrics.counted).toContainEqual({ name: 'QuotaRefusals', dimensions: { quota: 'runs-started' } });
    expect(harness.executions.started).toHaveLength(QUOTAS.runsStartedPerMinute + 2);
    expect([other.kind, nextMinute.kind]).toEqual(['started', 'started']);
  });

  it("applies a configuration's own lower limit to its runs only", async () => {
    // Prepare
    const { harness } = quotaHarness({ configuration: { quotas: { runsStartedPerMinute: 1 } } });

    // Act
    await start(harness);
    const refusal = await refusalOf(start(harness));

    // Assess
    expect(refusal.code).toBe('too-many-requests');
    expect(harness.executions.started).toHaveLength(1);
  });

  it('costs one read and two writes of the quota store when the principal is under its limits', async () => {
    // Prepare
    const { harness, calls } = quotaHarness();

    // Act
    await start(harness);

    // Assess: the runs it started (one read), this minute's count, and the run remembered.
    expect(calls).toEqual(['listStartedRuns', 'countInWindow', 'recordStartedRun']);
  });
});

describe('the waiting-runs quota', () => {
  it('refuses a start while the principal has the limit of runs waiting, and lets it go once one ends', async () => {
    // Prepare
    const { harness, metrics } = quotaHarness();
    const first = await startPausedRun(harness);
    await startPausedRun(harness);
    harness.clock.advance(60_000);

    // Act
    const refusal = await refusalOf(start(harness));
    await harness.runs.updateRun(first.runId, { status: 'completed' });
    const afterOneEnded = await start(harness);

    // Assess
    expect(refusal.code).toBe('too-many-requests');
    expect(refusal.retryAfterSeconds).toBe(WAITING_RUNS_RETRY_AFTER_SECONDS);
    expect(metrics.counted).toContainEqual({ name: 'QuotaRefusals', dimensions: { quota: 'waiting-runs' } });
    expect(afterOneEnded.kind).toBe('started');
  });

  it('forgets the runs that ended when it looks, so they cost nothing later', async () => {
    // Prepare
    const { harness, calls } = quotaHarness();
    const first = await startPausedRun(harness);
    const second = await startPausedRun(harness);
    for (const run of [first, second]) await harness.runs.updateRun(run.runId, { status: 'completed' });
    harness.clock.advance(60_000);

    // Act
    await start(harness);
    calls.length = 0;
    harness.clock.advance(60_000);
    await start(harness);

    // Assess: the second start found one run remembered (below the limit) and looked nothing up.
    expect(calls).toEqual(['listStartedRuns', 'countInWindow', 'recordStartedRun']);
    expect(await harness.dependencies.quotas?.listStartedRuns(OWNER.userId)).toHaveLength(2);
  });
});

describe('the completions and event-stream quotas', () => {
  it('counts completions per minute, with the configuration limit on top', async () => {
    // Prepare
    const { harness } = quotaHarness();
    const configuration = { configurationId: 'pages', quotas: { completionsPerMinute: 1 } };

    // Act
    await enforceCompletionQuota(harness.dependencies, OWNER, { configurationId: 'other' });
    await enforceCompletionQuota(harness.dependencies, OWNER, configuration);
    const own = await refusalOf(enforceCompletionQuota(harness.dependencies, OWNER, configuration));
    const deployment = await refusalOf(
      enforceCompletionQuota(harness.dependencies, OWNER, { configurationId: 'other' }),
    );

    // Assess
    expect(own.message).toMatch(/^You asked for as many completions as you may this minute/);
    expect(deployment.code).toBe('too-many-requests');
  });

  it('holds the limit of streams per principal, says when one frees, and frees a slot when a stream ends', async () => {
    // Prepare
    const { harness, metrics } = quotaHarness();
    const first = await takeEventStream(harness.dependencies, OWNER, 'request-1');
    await takeEventStream(harness.dependencies, OWNER, 'request-2');

    // Act
    const refusal = await refusalOf(takeEventStream(harness.dependencies, OWNER, 'request-3'));
    await releaseEventStream(harness.dependencies, first);
    const afterRelease = await takeEventStream(harness.dependencies, OWNER, 'request-4');

    // Assess
    expect(refusal.retryAfterSeconds).toBe(EVENT_STREAM_LEASE_SECONDS);
    expect(metrics.counted).toContainEqual({
      name: 'QuotaRefusals',
      dimensions: { quota: 'open-event-streams' },
    });
    expect(afterRelease?.leaseId).toBe('request-4');
  });

  it('enforces nothing where no quota store is composed', async () => {
    // Prepare
    const harness = createHarness();

    // Act
    const streams = await Promise.all(
      Array.from({ length: 5 }, (_unused, index) =>
        takeEventStream(harness.dependencies, OWNER, `r-${index}`),
      ),
    );

    // Assess
    expect(streams.every((stream) => stream === undefined)).toBe(true);
  });
});
