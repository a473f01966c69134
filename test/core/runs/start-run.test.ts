import { describe, expect, it } from 'vitest';
import { startRun } from '../../../lambdas/core/runs/start-run.js';
import { createHarness, OWNER, person, refusalOf, START } from './use-case-harness.js';

describe('startRun', () => {
  it('creates a running run owned by the principal and starts its execution under the run id', async () => {
    // Prepare
    const harness = createHarness({ configuration: { options: { fourEyes: true } } });

    // Act
    const outcome = await startRun(
      harness.dependencies,
      OWNER,
      { configurationId: 'pages', input: 'What is on page 12?' },
      'user-record',
    );

    // Assess
    expect(outcome).toEqual({ kind: 'started', runId: 'run-1', status: 'running' });
    expect(harness.executions.started).toEqual([{ runId: 'run-1', executionName: 'run-1' }]);
    expect(await harness.runs.getRunRecord('run-1')).toMatchObject({
      owner: OWNER.userId,
      configurationId: 'pages',
      status: 'running',
      turn: 0,
      createdAt: START,
      policy: { fourEyes: true },
    });
    expect(harness.metrics.counts.get('RunsStarted')).toBe(1);
  });

  it('refuses a principal without agent_run, or known only from the identity provider', async () => {
    // Prepare
    const harness = createHarness();
    const request = { configurationId: 'pages', input: 'List the pages' };

    // Act
    const ungranted = await refusalOf(
      startRun(harness.dependencies, person('alice', { grants: ['agent_approve'] }), request, 'user-record'),
    );
    const recordless = await refusalOf(startRun(harness.dependencies, OWNER, request, 'identity-provider'));

    // Assess
    expect(ungranted.code).toBe('forbidden');
    expect(recordless.code).toBe('forbidden');
    expect(harness.executions.started).toEqual([]);
    expect(await harness.runs.getRunRecord('run-1')).toBeUndefined();
  });

  it('names the missing task or configuration as a bad request', async () => {
    // Prepare
    const harness = createHarness();

    // Act
    const noTask = await refusalOf(
      startRun(harness.dependencies, OWNER, { taskId: 'seo', input: 'x' }, 'user-record'),
    );
    const noConfiguration = await refusalOf(
      startRun(harness.dependencies, OWNER, { configurationId: 'gone', input: 'x' }, 'user-record'),
    );

    // Assess
    expect([noTask.code, noTask.field]).toEqual(['bad-request', 'taskId']);
    expect([noConfiguration.code, noConfiguration.field]).toEqual(['bad-request', 'configurationId']);
  });

  it('refuses a principal the configuration does not let start runs', async () => {
    // Prepare
    const harness = createHarness({ configuration: { startAccess: { users: ['someone-else'] } } });

    // Act
    const refusal = await refusalOf(
      startRun(harness.dependencies, OWNER, { configurationId: 'pages', input: 'x' }, 'user-record'),
    );

    // Assess
    expect(refusal.code).toBe('forbidden');
    expect(harness.metrics.counts.get('StartRefusals')).toBe(1);
    expect(harness.executions.started).toEqual([]);
  });

  it('marks the run failed when its execution cannot start, instead of leaving it running', async () => {
    // Prepare
    const harness = createHarness();
    harness.executions.failNext = { call: 'start', error: new Error('StartExecution throttled') };

    // Act
    const refusal = await refusalOf(
      startRun(harness.dependencies, OWNER, { configurationId: 'pages', input: 'x' }, 'user-record'),
    );

    // Assess
    expect(refusal.code).toBe('internal');
    expect((await harness.runs.getRunRecord('run-1'))?.status).toBe('failed');
  });
});
