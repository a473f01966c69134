import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DECISION_RECORD_SCHEMA_VERSION,
  type DecisionRecord,
  readCardShown,
} from '../../lambdas/core/approvals/decision-record.js';
import type { RunExecutions } from '../../lambdas/core/ports.js';
import { UNDELIVERED_CLAIM_RETRY_MS } from '../../lambdas/core/runs/decide-run.js';
import { bodyOf } from '../support/api-answers.js';
import {
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';
import { decide, recordWritesAndDeliveries } from './approvers-support.js';

describe('decisions happen exactly once and are recorded before the write', () => {
  let runtime: TestRuntime;
  let restore: Array<() => void> = [];
  const pageWrites: string[] = [];
  const deliveries: string[] = [];

  beforeAll(async () => {
    runtime = await startTestRuntime();
    recordWritesAndDeliveries(runtime, { pageWrites, deliveries });
  });

  afterEach(() => {
    for (const undo of restore.reverse()) undo();
    restore = [];
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  /** Replaces one method for the current test only. */
  function replace<Target extends object, Name extends keyof Target>(
    target: Target,
    name: Name,
    replacement: Target[Name],
  ): void {
    const original = target[name];
    target[name] = replacement;
    restore.push(() => {
      target[name] = original;
    });
  }

  /** Moves the clock the decision use case reads forward, as if `ms` had passed. */
  function advanceClock(ms: number): void {
    const clock = runtime.dependencies.clock;
    runtime.dependencies.clock = { now: () => new Date(Date.now() + ms) };
    restore.push(() => {
      runtime.dependencies.clock = clock;
    });
  }

  async function waitingRun(input: string) {
    const { runId, view } = await startRunAndSettle(runtime, input);
    expect(view.status).toBe('waiting');
    return { runId, digest: view.digest as string, turn: view.turn as number };
  }

  async function pageKeywords(): Promise<string | undefined> {
    return (await runtime.dependencies.pages.getPage('12'))?.keywords;
  }

  it('resumes once and writes the page once for fifty parallel approvals; every answer is 200 or 409', async () => {
    // Prepare
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'fifty'");
    const writesBefore = pageWrites.length;
    const deliveriesBefore = deliveries.length;

    // Act
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => decide(runtime, runId, { digest, decision: 'approve' })),
    );
    const finished = await settle(runtime, runId, 'editor', turn);

    // Assess: nothing lost, one winner, the rest idempotent
    expect(answers).toHaveLength(50);
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    const decided = answers.filter((answer) => answer.status === 200);
    expect(decided.filter((answer) => bodyOf(answer).repeated === false)).toHaveLength(1);
    for (const answer of decided) {
      expect(answer.body).toMatchObject({ kind: 'decided', runId, turn, decision: 'approve' });
    }
    expect(deliveries.slice(deliveriesBefore)).toEqual(['delivered']);
    expect(pageWrites.slice(writesBefore)).toEqual([JSON.stringify({ keywords: 'fifty' })]);
    expect(finished.status).toBe('completed');
    expect(await pageKeywords()).toBe('fifty');
    expect(await runtime.dependencies.runs.getDecision(runId, turn)).toMatchObject({
      decision: 'approve',
      decidedBy: 'approver',
    });
  });

  it('records the decision (who, when, digest, reason, what the card showed) before the approved write runs', async () => {
    // Prepare
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'audited'");
    const recordAtWrite: Array<DecisionRecord | undefined> = [];
    const pages = runtime.dependencies.pages;
    const counted = pages.applyMetadata;
    replace(pages, 'applyMetadata', async (pageId, write) => {
      recordAtWrite.push(await runtime.dependencies.runs.getDecision(runId, turn));
      return counted.call(pages, pageId, write);
    });

    // Act
    const answer = await decide(runtime, runId, { digest, decision: 'approve', reason: 'Checked the page.' });
    await settle(runtime, runId, 'editor', turn);
    const conflicting = await decide(runtime, runId, {
      digest,
      decision: 'reject',
      reason: 'Changed my mind.',
    });

    // Assess
    expect(answer.status).toBe(200);
    expect(recordAtWrite).toHaveLength(1);
    const record = recordAtWrite[0];
    expect(record).toEqual({
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      claimId: expect.any(String),
      channel: 'api',
      runId,
      turn,
      decision: 'approve',
      digest,
      decidedBy: 'approver',
      decidedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      reason: 'Checked the page.',
      cardShown: expect.any(String),
    });
    // What the card showed, kept as JSON text so any JSON a model proposes can be recorded.
    expect(readCardShown(record?.cardShown ?? '')).toEqual({
      calls: [
        {
          index: 0,
          tool: 'update_page_metadata',
          arguments: { pageId: '12', keywords: 'audited' },
          preview: 'captured',
        },
      ],
    });
    // Append-only: a later, different decision changes nothing on record.
    expect(conflicting.status).toBe(409);
    expect(await runtime.dependencies.runs.getDecision(runId, turn)).toEqual(record);
  });

  it('does not execute a write whose approval cannot be recorded', async () => {
    // Prepare
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'unrecorded'");
    const keywordsBefore = await pageKeywords();
    const deliveriesBefore = deliveries.length;
    replace(runtime.dependencies.runs, 'claimDecision', async () => {
      throw new Error('DynamoDB is unavailable');
    });

    // Act
    const answer = await decide(runtime, runId, { digest, decision: 'approve' });
    const view = await runtime.client('editor').getRun({ path: { id: runId } });

    // Assess
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({ error: { code: 'internal', message: 'Internal error.' } });
    expect(deliveries.length).toBe(deliveriesBefore);
    expect(bodyOf(view).status).toBe('waiting');
    expect(await pageKeywords()).toBe(keywordsBefore);
    expect(await runtime.dependencies.runs.getDecision(runId, turn)).toBeUndefined();
  });

  it('recovers a claim whose delivery failed: a repeat waits out the in-flight window, then delivers', async () => {
    // Prepare: the executions port throws once, before anything reaches the state machine.
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'recovered'");
    const executions: RunExecutions = runtime.dependencies.executions;
    const resume = executions.resume;
    let failures = 0;
    replace(executions, 'resume', async (taskToken, decision) => {
      if (failures === 0) {
        failures += 1;
        throw new Error('Step Functions is unavailable');
      }
      return resume.call(executions, taskToken, decision);
    });
    const writesBefore = pageWrites.length;

    // Act
    const failed = await decide(runtime, runId, { digest, decision: 'approve' });
    const claimed = await runtime.dependencies.runs.getDecision(runId, turn);
    const earlyRepeat = await decide(runtime, runId, { digest, decision: 'approve' });
    const statusAfterEarlyRepeat = bodyOf(
      await runtime.client('editor').getRun({ path: { id: runId } }),
    ).status;
    advanceClock(UNDELIVERED_CLAIM_RETRY_MS + 1000);
    const lateRepeat = await decide(runtime, runId, { digest, decision: 'approve' });
    const finished = await settle(runtime, runId, 'editor', turn);

    // Assess
    expect(failed.status).toBe(500);
    expect(claimed?.decision).toBe('approve');
    expect(earlyRepeat.status).toBe(200);
    expect(statusAfterEarlyRepeat).toBe('waiting');
    expect(lateRepeat.status).toBe(200);
    expect(lateRepeat.body).toMatchObject({ decision: 'approve', repeated: true });
    expect(finished.status).toBe('completed');
    expect(pageWrites.slice(writesBefore)).toEqual([JSON.stringify({ keywords: 'recovered' })]);
    expect(await runtime.dependencies.runs.getCard(runId)).toMatchObject({
      state: 'closed',
      closedBecause: 'decided',
    });
  });

  it('counts a spent token after our own claim as delivered (the first delivery reached the state machine)', async () => {
    // Prepare: the first delivery reaches the state machine but its answer is lost, and the
    // card is not closed yet (the repeat arrives before anything else touched it).
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'delivered once'");
    const executions: RunExecutions = runtime.dependencies.executions;
    const resume = executions.resume;
    let calls = 0;
    replace(executions, 'resume', async (taskToken, decision) => {
      calls += 1;
      const outcome = await resume.call(executions, taskToken, decision);
      if (calls === 1) throw new Error('The connection dropped after SendTaskSuccess');
      return outcome;
    });
    const runs = runtime.dependencies.runs;
    const closeCard = runs.closeCard;
    replace(runs, 'closeCard', async () => ({ kind: 'not-open' }));
    const deliveriesBefore = deliveries.length;
    const writesBefore = pageWrites.length;

    // Act
    const lost = await decide(runtime, runId, { digest, decision: 'approve' });
    const finished = await settle(runtime, runId, 'editor', turn);
    const cardBeforeRepeat = await runs.getCard(runId);
    runs.closeCard = closeCard;
    advanceClock(UNDELIVERED_CLAIM_RETRY_MS + 1000);
    const repeat = await decide(runtime, runId, { digest, decision: 'approve' });

    // Assess
    expect(lost.status).toBe(500);
    expect(finished.status).toBe('completed');
    expect(cardBeforeRepeat?.state).toBe('open');
    expect(repeat.status).toBe(200);
    expect(repeat.body).toMatchObject({ decision: 'approve', repeated: true });
    expect(deliveries.slice(deliveriesBefore)).toEqual(['delivered', 'token-spent']);
    expect(pageWrites.slice(writesBefore)).toEqual([JSON.stringify({ keywords: 'delivered once' })]);
    expect(await runs.getCard(runId)).toMatchObject({ state: 'closed', closedBecause: 'decided' });
  });
});
