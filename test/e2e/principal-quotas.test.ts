import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userProfileSchema } from '../../lambdas/core/identity.js';
import { RUN_RECORD_SCHEMA_VERSION } from '../../lambdas/core/run-record.js';
import { RUN_STATE_SCHEMA_VERSION } from '../../lambdas/core/runs/run-state.js';
import { sealJson } from '../../lambdas/core/sealed-json.js';
import {
  apiClientWithToken,
  eventually,
  removeTestData,
  settle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';
import { makeStoredRun } from '../support/stored-run-fixtures.js';
import { createUser } from './approvers-support.js';

/** Low limits, so a burst shows them; deployed and locally the same store counts (dynalite here). */
const QUOTAS = { runsStartedPerMinute: 4, waitingRuns: 2, openEventStreams: 2, completionsPerMinute: 3 };

/** A user of its own per test, so each quota is seen alone. */
function editor(userId: string) {
  return userProfileSchema.parse({
    userId,
    displayName: userId,
    grants: ['agent_run'],
    pageAccess: '*',
    languageAccess: '*',
    toolAccess: ['update_page_metadata'],
  });
}

/** Waits, if needed, until at least 15 s of the current minute remain: a burst must fall in one window. */
async function withinOneWindow(): Promise<void> {
  const secondsIntoMinute = Math.floor(Date.now() / 1000) % 60;
  if (secondsIntoMinute > 45)
    await new Promise((resolve) => setTimeout(resolve, (61 - secondsIntoMinute) * 1000));
}

/** The `quota` dimensions of every QuotaRefusals metric the runtime wrote. */
function quotaRefusals(runtime: { metricLines: string[] }): string[] {
  return runtime.metricLines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((document) => document.QuotaRefusals !== undefined)
    .map((document) => String(document.quota));
}

describe('per-principal quotas, enforced by the same handlers and store as deployed', () => {
  let runtime: Awaited<ReturnType<typeof startTestRuntime>>;

  beforeAll(async () => {
    runtime = await startTestRuntime({ principalQuotas: QUOTAS });
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  it('answers a burst of starts past the limit with 429 and Retry-After, and counts each refusal', async () => {
    // Prepare
    const client = apiClientWithToken(runtime.url, await createUser(runtime, editor('burst-editor')));
    await withinOneWindow();

    // Act: seven starts at once, as a script would send them.
    const answers = await Promise.all(
      Array.from({ length: 7 }, () =>
        client.startRun({ body: { taskId: 'page-metadata', input: 'What is on page 12?' } }),
      ),
    );

    // Assess
    const refused = answers.filter((answer) => answer.status === 429);
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(QUOTAS.runsStartedPerMinute);
    expect(refused).toHaveLength(7 - QUOTAS.runsStartedPerMinute);
    for (const answer of refused) {
      const retryAfter = Number(answer.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'too-many-requests' } });
    }
    expect(quotaRefusals(runtime).filter((quota) => quota === 'runs-started')).toHaveLength(3);
  });

  it('refuses a start while the user has the limit of runs waiting, and takes it once one is cancelled', async () => {
    // Prepare: two runs that wait for a decision.
    const client = apiClientWithToken(runtime.url, await createUser(runtime, editor('waiting-editor')));
    const startWrite = () =>
      client.startRun({
        body: { taskId: 'page-metadata', input: "Set the description of page 12 to 'Sale'" },
      });
    const waiting: string[] = [];
    for (let count = 0; count < QUOTAS.waitingRuns; count += 1) {
      const started = await startWrite();
      const runId = started.body && 'runId' in started.body ? started.body.runId : '';
      await eventually(async () => {
        const record = await runtime.dependencies.runs.getRunRecord(runId);
        return record?.status === 'waiting' ? record : undefined;
      });
      waiting.push(runId);
    }

    // Act
    const refused = await startWrite();
    const cancelled = await client.cancelRun({
      path: { id: waiting[0] ?? '' },
      body: { reason: 'making room' },
    });
    const afterCancel = await startWrite();

    // Assess
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(JSON.parse(refused.text).error.message).toMatch(/decide or cancel some first/);
    expect(cancelled.status).toBe(200);
    expect(afterCancel.status).toBe(202);
    expect(quotaRefusals(runtime)).toContain('waiting-runs');
  });

  it('holds at most the limit of event streams per user open, and frees one when a client closes it', async () => {
    // Prepare: a run that keeps running, so a stream of it stays open until its client leaves.
    const user = editor('stream-editor');
    const token = await createUser(runtime, user);
    const runId = 'run-held-open';
    const now = new Date().toISOString();
    await runtime.dependencies.runs.createRun(
      makeStoredRun(runId, {
        schemaVersion: RUN_RECORD_SCHEMA_VERSION,
        owner: user.userId,
        createdAt: now,
        updatedAt: now,
      }),
      await sealJson(runtime.dependencies.sealer, 'run-state', runId, {
        schemaVersion: RUN_STATE_SCHEMA_VERSION,
        runId,
        turn: 0,
        transcript: [{ role: 'user', content: [{ type: 'text', text: 'Keep going.' }] }],
        pendingCalls: [],
        actingUser: user,
      }),
    );
    const open = async () => {
      const controller = new AbortController();
      const response = await fetch(`${runtime.url}/runs/${runId}/events`, {
        headers: { authorization: `Bearer ${token}` },
        signal: controller.signal,
      });
      return { response, close: () => controller.abort() };
    };
    const held = [await open(), await open()];

    // Act
    const third = await open();
    const thirdBody = await third.response.text();
    held[0]?.close();
    const afterClose = await eventually(async () => {
      const attempt = await open();
      if (attempt.response.status === 200) return attempt;
      await attempt.response.body?.cancel();
      return undefined;
    });

    // Assess
    expect(held.map((stream) => stream.response.status)).toEqual([200, 200]);
    expect(third.response.status).toBe(429);
    expect(Number(third.response.headers.get('retry-after'))).toBeGreaterThan(60);
    expect(JSON.parse(thirdBody)).toMatchObject({ error: { code: 'too-many-requests' } });
    expect(quotaRefusals(runtime)).toContain('open-event-streams');
    for (const stream of [held[1], afterClose]) stream?.close();
  });

  it("counts completions per minute, and a configuration's own lower limit first", async () => {
    // Prepare: a configuration that allows one completion a minute per user.
    const admin = runtime.client('admin');
    const demo = (await admin.getConfiguration({ path: { id: 'demo-scripted' } })).body as Record<
      string,
      unknown
    >;
    const tight = { ...demo, configurationId: 'tight', quotas: { completionsPerMinute: 1 } };
    expect((await admin.putConfiguration({ path: { id: 'tight' }, body: tight as never })).status).toBe(200);
    const client = apiClientWithToken(runtime.url, await createUser(runtime, editor('completion-editor')));
    const complete = (configurationId: string) =>
      client.completeText({ path: { id: configurationId }, body: { prompt: 'What is on page 12?' } });
    await withinOneWindow();

    // Act
    const firstTight = await complete('tight');
    const secondTight = await complete('tight');
    const others = [await complete('demo-scripted'), await complete('demo-scripted')];
    const overall = await complete('demo-scripted');

    // Assess
    expect(firstTight.status).toBe(200);
    expect(secondTight.status).toBe(429);
    expect(others.map((answer) => answer.status)).toEqual([200, 200]);
    expect(overall.status).toBe(429);
    expect(quotaRefusals(runtime).filter((quota) => quota === 'completions')).toHaveLength(2);
  });

  it('leaves a user under the limits untouched', async () => {
    // Act
    const { runId } = await (async () => {
      const started = await runtime.client('editor').startRun({
        body: { taskId: 'page-metadata', input: 'What is on page 12?' },
      });
      return { runId: started.body && 'runId' in started.body ? started.body.runId : '' };
    })();
    const view = await settle(runtime as TestRuntime, runId);

    // Assess
    expect(view.status).toBe('completed');
  });
});
