import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CountersignError } from '../../lambdas/core/errors.js';
import type { AwaitingApprovalEvent } from '../../lambdas/core/ports.js';
import { UNDELIVERED_CLAIM_RETRY_MS } from '../../lambdas/core/runs/decide-run.js';
import { decide, recordWritesAndDeliveries } from '../e2e/approvers-support.js';
import { bodyOf } from '../support/api-answers.js';
import {
  eventBridgeSeam,
  type HeldCall,
  holdCall,
  type InjectedFault,
  injectFault,
  serverErrorStatuses,
} from '../support/fault-seams.js';
import {
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';

/** Which stored item a DynamoDB call writes or reads, told by its key and values. */
const ITEMS = {
  // The pause's read of the turn's decision (beside the run's and the card's, at once).
  decisionRead: (input: string) => input.includes('DECISION#'),
  card: (input: string) => input.includes('"CARD"') && input.includes('sealedCard'),
  inboxEntry: (input: string) => input.includes('INBOX#'),
  runWaiting: (input: string) => input.includes('pendingToolNames') && input.includes('"waiting"'),
  outbox: (input: string) => input.includes('"CARD"') && input.includes('notification'),
} as const;

/**
 * The pause path under faults (issue #29): each AWS call of AwaitApproval failing once, before
 * or after it applied (the workflow retries the step), an approval landing while the pause is
 * retried, and the process killed in the middle of a pause. A pause is idempotent end to end:
 * one open card, no card reopened once decided, one `Run Awaiting Approval` per pause, and the
 * approved write applied once.
 */
describe('a pause under faults', () => {
  let runtime: TestRuntime;
  let events: ReturnType<typeof eventBridgeSeam>;
  const pageWrites: string[] = [];
  let faults: Array<InjectedFault | HeldCall> = [];

  beforeAll(async () => {
    runtime = await startTestRuntime();
    events = eventBridgeSeam();
    // EventBridge through its real SDK client and notifier, in process.
    runtime.dependencies.notifier.runAwaitingApproval = (event) => events.notifier.runAwaitingApproval(event);
    recordWritesAndDeliveries(runtime, { pageWrites, deliveries: [] });
  });

  afterEach(() => {
    for (const fault of faults) fault.remove();
    faults = [];
  });

  afterAll(async () => {
    // No answer of the whole file was a 500: a transient fault is a 503, a refusal a 4xx.
    expect(serverErrorStatuses(runtime.logLines)).not.toContain(500);
    await runtime?.stop();
    if (runtime) await removeTestData(runtime);
  });

  const eventsOf = (runId: string): AwaitingApprovalEvent[] =>
    events.sent.filter((event) => event.runId === runId);

  /**
   * Starts a run and waits until its pause is over: the run waits and every attempt of its pause
   * has ended (a retried pause may still be sending when the run already shows `waiting`).
   */
  async function pausedRun(keywords: string) {
    const { runId, view } = await startRunAndSettle(runtime, `Set the keywords of page 12 to '${keywords}'`);
    await runtime.runner.idle();
    const card = await runtime.dependencies.runs.getCard(runId);
    return { runId, view, card };
  }

  /** Approves the waiting run's card and expects its write applied once. */
  async function approveAndExpectOneWrite(runId: string, keywords: string): Promise<void> {
    const view = bodyOf(await runtime.client('editor').getRun({ path: { id: runId } }));
    const writesBefore = pageWrites.length;
    const answer = await decide(runtime, runId, { digest: view.digest as string, decision: 'approve' });
    expect(answer.status).toBe(200);
    const finished = await settle(runtime, runId, 'editor', view.turn as number);
    expect(finished.status).toBe('completed');
    expect(pageWrites.slice(writesBefore)).toEqual([JSON.stringify({ keywords })]);
  }

  /**
   * Starts a run whose first pause attempt puts the card and fails marking the run waiting; its
   * retry is held at its read of the turn's decision (released by the test) once it got there.
   */
  async function startWithPauseRetryHeld(keywords: string): Promise<{ runId: string; retry: HeldCall }> {
    faults.push(
      injectFault(runtime.dynamo.client, {
        command: 'UpdateItem',
        matching: ITEMS.runWaiting,
        when: 'before-applied',
      }),
    );
    const retry = holdCall(runtime.dynamo.client, {
      command: 'GetItem',
      matching: ITEMS.decisionRead,
      nth: 2,
    });
    faults.push(retry);
    const started = await runtime.client('editor').startRun({
      body: { taskId: 'page-metadata', input: `Set the keywords of page 12 to '${keywords}'` },
    });
    await retry.entered();
    return { runId: bodyOf(started).runId, retry };
  }

  const cases = [
    ["the pause's read of the turn's decision", 'GetItem', ITEMS.decisionRead],
    ['the card', 'PutItem', ITEMS.card],
    ["the card's approver entry", 'PutItem', ITEMS.inboxEntry],
    ['the run moving to waiting', 'UpdateItem', ITEMS.runWaiting],
    ["the card's outbox marked sent", 'UpdateItem', ITEMS.outbox],
  ] as const;

  for (const [label, command, matching] of cases) {
    for (const when of ['before-applied', 'after-applied'] as const) {
      it(`waits on one card and sends one event when ${label} fails once ${when.replace('-', ' ')}`, async () => {
        // Prepare
        const keywords = `${command} ${when} ${label.length}`;
        faults.push(injectFault(runtime.dynamo.client, { command, matching, when }));

        // Act
        const { runId, view, card } = await pausedRun(keywords);

        // Assess
        expect((faults[0] as InjectedFault).fired()).toBe(1);
        expect(view.status).toBe('waiting');
        // The event went out; only a mark that failed before it applied leaves the outbox pending.
        expect(card).toMatchObject({
          state: 'open',
          notification: matching === ITEMS.outbox && when === 'before-applied' ? 'pending' : 'sent',
        });
        expect(eventsOf(runId)).toHaveLength(1);
        const inbox = bodyOf(await runtime.client('approver').listInbox());
        expect(inbox.cards.filter((card) => card.runId === runId)).toHaveLength(1);
        await approveAndExpectOneWrite(runId, keywords);
      });
    }
  }

  it('sends the event again only when PutEvents failed before it went out', async () => {
    // Prepare
    faults.push(injectFault(events.client, { command: 'PutEvents', when: 'before-applied' }));

    // Act
    const { runId, view } = await pausedRun('event retried');

    // Assess
    expect((faults[0] as InjectedFault).fired()).toBe(1);
    expect(view.status).toBe('waiting');
    expect(eventsOf(runId)).toHaveLength(1);
    await approveAndExpectOneWrite(runId, 'event retried');
  });

  it('names the pause in a PutEvents whose answer was lost and was sent again, so a consumer keeps one', async () => {
    // Prepare: the one case no sender can make exactly once (EventBridge keeps no idempotency key).
    faults.push(injectFault(events.client, { command: 'PutEvents', when: 'after-applied' }));

    // Act
    const { runId } = await pausedRun('event answer lost');

    // Assess: the same pause (run id and pausedAt) twice; one distinct pause.
    const sent = eventsOf(runId);
    expect(sent).toHaveLength(2);
    expect(new Set(sent.map((event) => `${event.runId} ${event.pausedAt}`)).size).toBe(1);
    await approveAndExpectOneWrite(runId, 'event answer lost');
  });

  it('never reopens a card whose turn was decided while its pause was retried: the retry carries the approval on', async () => {
    // Prepare: the retry is held until an approver decided on the card the first attempt put.
    const writesBefore = pageWrites.length;
    const { runId, retry } = await startWithPauseRetryHeld('decided meanwhile');

    // Act
    const card = await runtime.dependencies.runs.getCard(runId);
    const answer = await decide(runtime, runId, { digest: card?.digest ?? '', decision: 'approve' });
    const cardAfterDecision = await runtime.dependencies.runs.getCard(runId);
    retry.release();
    const finished = await settle(runtime, runId, 'editor', card?.turn);

    // Assess
    expect(answer.status).toBe(200);
    expect(cardAfterDecision).toMatchObject({ state: 'closed', closedBecause: 'decided' });
    expect(finished.status).toBe('completed');
    expect(pageWrites.slice(writesBefore)).toEqual([JSON.stringify({ keywords: 'decided meanwhile' })]);
    expect(await runtime.dependencies.runs.getCard(runId)).toMatchObject({ state: 'closed' });
    expect(
      runtime.logLines.some((line) => line.includes('approval wait not reopened: the turn is decided')),
    ).toBe(true);
    expect(eventsOf(runId).length).toBeLessThanOrEqual(1);
  });

  it('carries a decision on only with its receipt entry: a retried pause that finds none waits for the repeat, which appends it', async () => {
    // Prepare: the retry is held while an approver decides and signing fails (the claim is made,
    // its entry is not: the second fault within seconds, issue #25)
    const signer = runtime.dependencies.receipts.signer as NonNullable<
      typeof runtime.dependencies.receipts.signer
    >;
    const sign = signer.sign;
    signer.sign = async () => {
      throw new CountersignError('unavailable', 'KMS is throttling.');
    };
    const writesBefore = pageWrites.length;
    const { runId, retry } = await startWithPauseRetryHeld('entry missing');
    const card = await runtime.dependencies.runs.getCard(runId);
    const decision = { digest: card?.digest ?? '', decision: 'approve' } as const;

    // Act: the decision is claimed without its entry; then the retried pause reads it
    const failed = await runtime.sendRaw('POST', `/runs/${runId}/decision`, {
      as: 'approver',
      body: decision,
    });
    retry.release();
    await runtime.runner.idle();
    const whileMissing = {
      run: bodyOf(await runtime.client('editor').getRun({ path: { id: runId } })),
      card: await runtime.dependencies.runs.getCard(runId),
      receipt: bodyOf(await runtime.client('editor').getRunReceipt({ path: { id: runId } })),
      writes: pageWrites.slice(writesBefore),
    };
    // the approver sends it again once the first may no longer be in flight: it appends, then delivers
    signer.sign = sign;
    const clock = runtime.dependencies.clock;
    runtime.dependencies.clock = { now: () => new Date(Date.now() + UNDELIVERED_CLAIM_RETRY_MS + 1000) };
    const repeat = await decide(runtime, runId, decision).finally(() => {
      runtime.dependencies.clock = clock;
    });
    const finished = await settle(runtime, runId, 'editor', card?.turn);

    // Assess: nothing ran and the run waited on its card until the entry was on the chain
    expect(failed.status).toBe(503);
    expect(await runtime.dependencies.runs.getDecision(runId, card?.turn ?? 0)).toMatchObject({
      decision: 'approve',
    });
    expect(whileMissing.run.status).toBe('waiting');
    expect(whileMissing.card).toMatchObject({ state: 'open' });
    expect(whileMissing.receipt.entries).toEqual([]);
    expect(whileMissing.writes).toEqual([]);
    expect(
      runtime.logLines.some((line) => line.includes('decision on record without its receipt entry')),
    ).toBe(true);
    expect(repeat.status).toBe(200);
    expect(finished.status).toBe('completed');
    expect(pageWrites.slice(writesBefore)).toEqual([JSON.stringify({ keywords: 'entry missing' })]);
    const receipt = bodyOf(await runtime.client('editor').getRunReceipt({ path: { id: runId } }));
    expect(receipt.entries).toMatchObject([{ kind: 'decision', decision: 'approve', turn: card?.turn }]);
  });
});
