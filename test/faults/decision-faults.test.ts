import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_RECEIPT_PUBLIC_KEY_FILE } from '../../lambdas/adapters/local-receipt-signer.js';
import { verifyReceipt } from '../../lambdas/core/receipts/verify-receipt.js';
import { UNDELIVERED_DECISION_AGE_MS } from '../../lambdas/core/runs/redeliver-decisions.js';
import { decide, recordWritesAndDeliveries } from '../e2e/approvers-support.js';
import { bodyOf } from '../support/api-answers.js';
import {
  type FaultPlan,
  type InjectedFault,
  injectFault,
  type SeamableClient,
  serverErrorStatuses,
  stepFunctionsSeam,
} from '../support/fault-seams.js';
import {
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';

/**
 * The decide path under faults (issue #29): each AWS call of POST /runs/{id}/decision failing
 * once, before or after it applied. Whatever fails, one decision is on record, the approved
 * write is applied once, no run is left waiting with a decision on record, and no answer is a
 * 500: a transient fault is a 503 with Retry-After that says whether the decision is on record.
 */
describe('a decision under faults', () => {
  let runtime: TestRuntime;
  let sfnClient: ReturnType<typeof stepFunctionsSeam>['client'];
  const pageWrites: string[] = [];
  const deliveries: string[] = [];
  let faults: InjectedFault[] = [];
  let undo: Array<() => void> = [];

  beforeAll(async () => {
    runtime = await startTestRuntime();
    // Step Functions through its real SDK client and adapter (in process), so a fault there is
    // the error the deployed adapter meets; the page writes and deliveries are counted at the ports.
    const sfn = stepFunctionsSeam(runtime.runner);
    runtime.dependencies.executions.resume = (taskToken, decision) =>
      sfn.executions.resume(taskToken, decision);
    recordWritesAndDeliveries(runtime, { pageWrites, deliveries });
    sfnClient = sfn.client;
  });

  afterEach(() => {
    for (const fault of faults) fault.remove();
    for (const step of undo.reverse()) step();
    faults = [];
    undo = [];
  });

  afterAll(async () => {
    // No answer of the whole file was a 500: a transient fault is a 503 (logged as such), a refusal a 4xx.
    expect(serverErrorStatuses(runtime.logLines)).toContain(503);
    expect(serverErrorStatuses(runtime.logLines)).not.toContain(500);
    await runtime.stop();
    await removeTestData(runtime);
  });

  async function waitingRun(keywords: string) {
    const { runId, view } = await startRunAndSettle(runtime, `Set the keywords of page 12 to '${keywords}'`);
    expect(view.status).toBe('waiting');
    return { runId, digest: view.digest as string, turn: view.turn as number };
  }

  /** A waiting run, and one fault planned on `client` (the table by default) for its decision. */
  async function waitingRunWithFault(
    keywords: string,
    plan: (runId: string) => FaultPlan,
    client: SeamableClient = runtime.dynamo.client,
  ) {
    const run = await waitingRun(keywords);
    faults.push(injectFault(client, plan(run.runId)));
    return { ...run, writesBefore: pageWrites.length };
  }

  /** Moves the clock the use cases and the probe read forward, as if `ms` had passed. */
  function advanceClock(ms: number): void {
    const clock = runtime.dependencies.clock;
    runtime.dependencies.clock = { now: () => new Date(Date.now() + ms) };
    undo.push(() => {
      runtime.dependencies.clock = clock;
    });
  }

  /** The table's own view: claimed approvals or rejections still waiting for their delivery. */
  async function undelivered(runId: string): Promise<number> {
    const claims = await runtime.dependencies.runs.listUndeliveredDecisions({
      decidedBefore: new Date(Date.now() + 3_600_000).toISOString(),
      limit: 100,
    });
    return claims.filter((claim) => claim.runId === runId).length;
  }

  /** The run ended with its write applied once, its card closed, nothing left to deliver. */
  async function expectCarriedOutOnce(runId: string, turn: number, keywords: string, writesBefore: number) {
    const finished = await settle(runtime, runId, 'editor', turn);
    expect(finished.status).toBe('completed');
    expect(pageWrites.slice(writesBefore)).toEqual([JSON.stringify({ keywords })]);
    expect((await runtime.dependencies.pages.getPage('12'))?.keywords).toBe(keywords);
    expect(await runtime.dependencies.runs.getDecision(runId, turn)).toMatchObject({ decision: 'approve' });
    expect(await runtime.dependencies.runs.getCard(runId)).toMatchObject({
      state: 'closed',
      closedBecause: 'decided',
    });
    // The probe finds nothing left for this run (the one delivered, the others already marked).
    advanceClock(UNDELIVERED_DECISION_AGE_MS + 1000);
    await runtime.probe.runOnce();
    expect(await undelivered(runId)).toBe(0);
    // Its receipt holds the one claimed decision, signed, however often it was sent (issue #25).
    const receipt = bodyOf(await runtime.client('editor').getRunReceipt({ path: { id: runId } }));
    expect(verifyReceipt(receipt, { publicKey: await readReceiptKey() }, { runId })).toMatchObject({
      kind: 'verified',
      entries: [{ kind: 'decision', decision: 'approve', by: 'approver', signed: true }],
    });
  }

  /** The local runtime's receipt key, public half (docs/receipts.md). */
  const readReceiptKey = async () =>
    createPublicKey(
      await readFile(
        join(runtime.baseDirectory, '.countersign', 'keys', LOCAL_RECEIPT_PUBLIC_KEY_FILE),
        'utf8',
      ),
    );

  /** POST /runs/{id}/decision as sent, its answer read whatever it is (a 503 among them). */
  const sendDecision = (runId: string, digest: string) =>
    runtime.sendRaw('POST', `/runs/${runId}/decision`, {
      as: 'approver',
      body: { digest, decision: 'approve' },
    });

  const onDecision = (runId: string) => (input: string) =>
    input.includes(`RUN#${runId}`) && input.includes('DECISION#');

  it('knows its own claim when the SDK retries a claim that had applied: it delivers at once (200, not "repeated")', async () => {
    // Prepare
    const { runId, digest, turn, writesBefore } = await waitingRunWithFault('claim retried', (runId) => ({
      command: 'PutItem',
      matching: onDecision(runId),
      when: 'after-applied',
      layer: 'inside-sdk-retries',
    }));

    // Act
    const answer = await decide(runtime, runId, { digest, decision: 'approve' });

    // Assess
    expect(faults[0]?.fired()).toBe(1);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ kind: 'decided', repeated: false });
    await expectCarriedOutOnce(runId, turn, 'claim retried', writesBefore);
  });

  it('answers 503 "not on record" with Retry-After when the claim failed before it applied, and a repeat decides', async () => {
    // Prepare
    const { runId, digest, turn, writesBefore } = await waitingRunWithFault('claim refused', (runId) => ({
      command: 'PutItem',
      matching: onDecision(runId),
      when: 'before-applied',
    }));

    // Act
    const failed = await sendDecision(runId, digest);
    const decisionAfterFault = await runtime.dependencies.runs.getDecision(runId, turn);
    const repeat = await decide(runtime, runId, { digest, decision: 'approve' });

    // Assess
    expect(faults.every((fault) => fault.fired() === 1)).toBe(true);
    expect(failed.status).toBe(503);
    expect(failed.json).toMatchObject({ error: { code: 'unavailable', decisionOnRecord: 'no' } });
    expect(decisionAfterFault).toBeUndefined();
    expect(repeat.status).toBe(200);
    await expectCarriedOutOnce(runId, turn, 'claim refused', writesBefore);
  });

  it('reads its claim back when the claim applied but its answer was lost, and delivers (200)', async () => {
    // Prepare
    const { runId, digest, turn, writesBefore } = await waitingRunWithFault('claim read back', (runId) => ({
      command: 'PutItem',
      matching: onDecision(runId),
      when: 'after-applied',
    }));

    // Act
    const answer = await decide(runtime, runId, { digest, decision: 'approve' });

    // Assess
    expect(faults[0]?.fired()).toBe(1);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ repeated: false });
    await expectCarriedOutOnce(runId, turn, 'claim read back', writesBefore);
  });

  it.each([
    ['before it applied', 'before-applied', 'after-sdk-retries'],
    ['after it applied, retried by the SDK', 'after-applied', 'inside-sdk-retries'],
  ] as const)(
    'appends the receipt entry once when its write fails %s, before delivering (200)',
    async (_label, when, layer) => {
      // Prepare
      const keywords = `entry ${when}`;
      const { runId, digest, turn, writesBefore } = await waitingRunWithFault(keywords, (runId) => ({
        command: 'PutItem',
        matching: (input: string) => input.includes(`RUN#${runId}`) && input.includes('CHAIN#'),
        when,
        layer,
      }));

      // Act
      const answer = await decide(runtime, runId, { digest, decision: 'approve' });

      // Assess: a claim read back after the fault gets its entry, then the delivery (issue #25)
      expect(faults[0]?.fired()).toBe(1);
      expect(answer.status).toBe(200);
      await expectCarriedOutOnce(runId, turn, keywords, writesBefore);
    },
  );

  it.each([
    ['before', 'before-applied'],
    ['after', 'after-applied'],
  ] as const)(
    'delivers by itself when SendTaskSuccess failed %s it applied: 503 "on record", then the probe, never the approver',
    async (_label, when) => {
      // Prepare
      const { runId, digest, turn } = await waitingRun(`delivery ${when}`);
      const writesBefore = pageWrites.length;
      faults.push(injectFault(sfnClient, { command: 'SendTaskSuccess', when }));

      // Act
      const answer = await sendDecision(runId, digest);
      if (when === 'before-applied') {
        // Nothing reached the state machine: the probe, a minute later, delivers it.
        expect(bodyOf(await runtime.client('editor').getRun({ path: { id: runId } })).status).toBe('waiting');
        advanceClock(UNDELIVERED_DECISION_AGE_MS + 1000);
        await runtime.probe.runOnce();
      }

      // Assess
      expect(faults.every((fault) => fault.fired() === 1)).toBe(true);
      expect(answer.status).toBe(503);
      expect(answer.json).toMatchObject({ error: { code: 'unavailable', decisionOnRecord: 'yes' } });
      await expectCarriedOutOnce(runId, turn, `delivery ${when}`, writesBefore);
    },
  );

  it.each([
    [
      'the card item',
      (runId: string) => (input: string) => input.includes(`RUN#${runId}`) && input.includes('"CARD"'),
    ],
    [
      'the decision record',
      (runId: string) => (input: string) => input.includes(`RUN#${runId}`) && input.includes('DECISION#'),
    ],
  ])(
    'answers 503 "on record" when closing %s failed after the delivery, and the run goes on',
    async (_label, matching) => {
      // Prepare
      const { runId, digest, turn } = await waitingRun(`closing ${_label}`);
      const writesBefore = pageWrites.length;
      faults.push(
        injectFault(runtime.dynamo.client, {
          command: 'UpdateItem',
          matching: matching(runId),
          when: 'before-applied',
        }),
      );

      // Act
      const answer = await sendDecision(runId, digest);

      // Assess
      expect(faults.every((fault) => fault.fired() === 1)).toBe(true);
      expect(answer.status).toBe(503);
      expect(answer.json).toMatchObject({ error: { decisionOnRecord: 'yes' } });
      await expectCarriedOutOnce(runId, turn, `closing ${_label}`, writesBefore);
    },
  );

  it('answers a throttled read before the claim with 503 "not on record" and Retry-After, never 500', async () => {
    // Prepare
    const { runId, digest, turn, writesBefore } = await waitingRunWithFault(
      'card read throttled',
      (runId) => ({
        command: 'GetItem',
        matching: (input) => input.includes(`RUN#${runId}`) && input.includes('"CARD"'),
        when: 'before-applied',
      }),
    );

    // Act
    const failed = await runtime.client('approver').send({
      method: 'POST',
      path: `/runs/${runId}/decision`,
      body: { digest, decision: 'approve' },
    });
    const repeat = await decide(runtime, runId, { digest, decision: 'approve' });

    // Assess
    expect(faults.every((fault) => fault.fired() === 1)).toBe(true);
    expect(failed.status).toBe(503);
    expect(failed.headers.get('retry-after')).toBe('2');
    expect(failed.body).toMatchObject({ error: { code: 'unavailable', decisionOnRecord: 'no' } });
    expect(repeat.status).toBe(200);
    await expectCarriedOutOnce(runId, turn, 'card read throttled', writesBefore);
  });
});
