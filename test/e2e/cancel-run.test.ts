import { afterEach, describe, expect, it } from 'vitest';
import type { ApiResponse } from '../../lambdas/contract/api-client.js';
import {
  DECISION_RECORD_SCHEMA_VERSION,
  NO_CARD_SHOWN,
} from '../../lambdas/core/approvals/decision-record.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, type RequestBody, refusalOf } from '../support/api-answers.js';
import { eventually, settle, startRunAndSettle, useTestRuntime } from '../support/local-runtime.js';
import { readRunEvents } from '../support/server-sent-events.js';
import { decide } from './approvers-support.js';

describe('POST /runs/{id}/cancel', () => {
  const runtime = useTestRuntime();
  let restore: Array<() => void> = [];
  afterEach(() => {
    for (const undo of restore.reverse()) undo();
    restore = [];
  });

  const cancel = (runId: string, body?: RequestBody<'cancelRun'>, as = 'editor') =>
    runtime.client(as).cancelRun({ path: { id: runId }, ...(body === undefined ? {} : { body }) });

  async function waitingRun(input: string) {
    const { runId, view } = await startRunAndSettle(runtime, input);
    expect(view.status).toBe('waiting');
    return { runId, digest: view.digest as string, turn: view.turn as number };
  }

  /** Counts page writes from now on (the approved write goes through this port). */
  function countPageWrites(): string[] {
    const writes: string[] = [];
    const pages = runtime.dependencies.pages;
    const original = pages.applyMetadata;
    pages.applyMetadata = async (pageId, write) => {
      writes.push(pageId);
      return original.call(pages, pageId, write);
    };
    restore.push(() => {
      pages.applyMetadata = original;
    });
    return writes;
  }

  /** Holds every call of a page-store method at its start until `release`; `entered` resolves at the first call. */
  function holdPageCalls<Method extends 'getPage' | 'applyMetadata'>(method: Method) {
    const pages = runtime.dependencies.pages;
    const original = pages[method];
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = false;
    const held = async (...args: unknown[]) => {
      entered = true;
      await released;
      return (original as (...args: unknown[]) => Promise<unknown>).apply(pages, args);
    };
    pages[method] = held as (typeof pages)[Method];
    restore.push(() => {
      pages[method] = original;
    });
    return { entered: () => eventually(async () => (entered ? true : undefined)), release: () => release() };
  }

  it('cancels a waiting run: stops its execution, closes its card, records who and why, streams the state', async () => {
    // Prepare
    const { runId, digest } = await waitingRun("Set the keywords of page 12 to 'cancel-me'");
    const executionsBefore = runtime.runner.runningCount();
    const writes = countPageWrites();

    // Act
    const answer = await cancel(runId, { reason: 'Wrong page.' });
    const view = await runtime.client('editor').getRun({ path: { id: runId } });
    const inbox = await runtime.client('approver').listInbox({ query: { limit: 100 } });
    const lateApproval = await decide(runtime, runId, { digest, decision: 'approve' });
    const stream = await readRunEvents(runtime, runId, 'editor');

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      runId,
      status: 'cancelled',
      cancelledBy: 'editor',
      reason: 'Wrong page.',
      repeated: false,
    });
    expect(view.body).toMatchObject({
      status: 'cancelled',
      cancellation: { by: 'editor', reason: 'Wrong page.' },
    });
    expect(bodyOf(view).pendingTools).toBeUndefined();
    expect(bodyOf(inbox).cards.map((card: { runId: string }) => card.runId)).not.toContain(runId);
    expect(lateApproval.status).toBe(409);
    expect(refusalOf(lateApproval).error.message).toBe(TEXTS.runCancelled);
    expect(runtime.runner.runningCount()).toBe(executionsBefore - 1);
    expect(stream.events.at(-1)).toMatchObject({
      event: 'state',
      data: { runId, status: 'cancelled', cancellation: { by: 'editor', reason: 'Wrong page.' } },
    });
    expect(writes).toEqual([]);
    expect(await runtime.dependencies.runs.getDecision(runId, bodyOf(view).turn)).toMatchObject({
      decision: 'cancel',
      decidedBy: 'editor',
      reason: 'Wrong page.',
    });
  });

  it('costs two reads, four conditional writes and one StopExecution for a waiting run, no KMS, and its receipt entry', async () => {
    // Prepare
    const { runId } = await waitingRun("Set the keywords of page 12 to 'counted'");
    runtime.calls.reset();

    // Act
    const answer = await cancel(runId);
    const snapshot = runtime.calls.snapshot();

    // Assess: the caller's record, the run, the card; the cancel claim, the run, closing the card and its inbox entry;
    // the receipt (issue #25): the run as cancelled, its chain (Query) and the cancel's entry, unsigned
    expect(answer.status).toBe(200);
    expect(snapshot).toEqual({
      'DynamoDB:GetItem': 4,
      'DynamoDB:PutItem': 2,
      'DynamoDB:Query': 1,
      'DynamoDB:UpdateItem': 3,
      'EventBridge:PutEvents': 1, // "Card Closed": the channels update their messages (issue #23)
      'SFN:StopExecution': 1,
    });
  });

  it('answers a repeated cancel with 200 and the first outcome, from the owner or an admin', async () => {
    // Prepare
    const { runId } = await waitingRun("Set the keywords of page 14 to 'twice'");
    const first = await cancel(runId, { reason: 'Not needed.' });

    // Act
    const again = await cancel(runId);
    const byAdmin = await cancel(runId, { reason: 'Cleaning up.' }, 'admin');

    // Assess
    expect(first.status).toBe(200);
    for (const repeated of [again, byAdmin]) {
      expect(repeated.status).toBe(200);
      expect(repeated.body).toEqual({ ...bodyOf(first), repeated: true });
    }
  });

  it("lets an admin cancel anyone's run; 404 for someone else's or an unknown run, 409 once ended, 400 for a bad body", async () => {
    // Prepare
    const { runId } = await waitingRun("Set the keywords of page 12 to 'admin-cancels'");
    const completed = await startRunAndSettle(runtime, 'What is on page 12?');
    expect(completed.view.status).toBe('completed');

    // Act
    const byApprover = await cancel(runId, {}, 'approver');
    const unknown = await cancel('00000000-0000-0000-0000-000000000000');
    // raw: an unknown field and an oversized reason, on purpose
    const badBody = await runtime.sendRaw('POST', `/runs/${runId}/cancel`, {
      as: 'editor',
      body: { reason: 'x', force: true },
    });
    const tooLong = await runtime.sendRaw('POST', `/runs/${runId}/cancel`, {
      as: 'editor',
      body: { reason: 'x'.repeat(2001) },
    });
    const ended = await cancel(completed.runId);
    const byAdmin = await cancel(runId, undefined, 'admin');

    // Assess
    expect(byApprover.status).toBe(404);
    expect(refusalOf(byApprover).error.message).toBe(TEXTS.runNotFound);
    expect(unknown.status).toBe(404);
    expect(badBody.status).toBe(400);
    expect(badBody.json.error.message).toContain('force');
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.error.message).toContain('reason');
    expect(ended.status).toBe(409);
    expect(refusalOf(ended).error.message).toBe(TEXTS.cancelEnded('completed'));
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body).toMatchObject({ status: 'cancelled', cancelledBy: 'admin', repeated: false });
  });

  it('gives a cancel racing approvals exactly one winner, and no write after a winning cancel', async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < 6; round += 1) {
      // Prepare
      const { runId, digest, turn } = await waitingRun(`Set the keywords of page 12 to 'race-${round}'`);
      const writes = countPageWrites();

      // Act: one cancel among five approvals, all at once (the cancel first, last or between)
      const requests: Array<() => Promise<ApiResponse<'decideRun'> | ApiResponse<'cancelRun'>>> = Array.from(
        { length: 5 },
        () => () => decide(runtime, runId, { digest, decision: 'approve' }),
      );
      // Later rounds hold the cancel back a little, so the approvals get ahead of it too.
      requests.splice(round % 6, 0, async () => {
        await new Promise((resolve) => setTimeout(resolve, round * 15));
        return cancel(runId, { reason: 'race' });
      });
      const answers = await Promise.all(requests.map((send) => send()));
      const cancelAnswer = answers[round % 6];
      const approvals = answers.filter((answer) => answer !== cancelAnswer);
      const finished = await settle(runtime, runId, 'editor', turn);

      // Assess: the turn's one claim names the winner
      const claim = await runtime.dependencies.runs.getDecision(runId, turn);
      const approvedFirst = approvals.filter(
        (answer) => answer.status === 200 && bodyOf(answer, 200).repeated === false,
      );
      const status = bodyOf(await runtime.client('editor').getRun({ path: { id: runId } })).status;
      if (claim?.decision === 'cancel') {
        outcomes.push('cancel');
        expect(cancelAnswer?.status).toBe(200);
        for (const approval of approvals) expect(approval.status).toBe(409);
        expect(finished.status).toBe('cancelled');
        expect(status).toBe('cancelled');
        expect(writes).toEqual([]);
      } else {
        outcomes.push('approve');
        expect(claim?.decision).toBe('approve');
        expect(approvedFirst).toHaveLength(1);
        for (const approval of approvals) expect([200, 409]).toContain(approval.status);
        // The approved write runs exactly once. A cancel during it is refused; one after it
        // ends the run (nothing is left to write) or finds it already completed.
        expect(writes).toEqual(['12']);
        if (cancelAnswer?.status === 200) expect(status).toBe('cancelled');
        else {
          expect(cancelAnswer?.status).toBe(409);
          expect([TEXTS.cancelAfterApproval, TEXTS.cancelEnded('completed')]).toContain(
            refusalOf(cancelAnswer).error.message,
          );
        }
      }
    }
    // Either order may win a round; every round had exactly one winner.
    expect(outcomes).toHaveLength(6);
  });

  it('refuses (409) a cancel that comes after the approval while the approved write runs, and the write completes', async () => {
    // Prepare: the approved write blocks until released
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 14 to 'approved-first'");
    const write = holdPageCalls('applyMetadata');

    // Act
    const approval = await decide(runtime, runId, { digest, decision: 'approve' });
    await write.entered();
    const lateCancel = await cancel(runId, { reason: 'too late' });
    write.release();
    const finished = await settle(runtime, runId, 'editor', turn);

    // Assess
    expect(approval.status).toBe(200);
    expect(lateCancel.status).toBe(409);
    expect(refusalOf(lateCancel).error.message).toBe(TEXTS.cancelAfterApproval);
    expect(finished.status).toBe('completed');
    expect((await runtime.dependencies.pages.getPage('14'))?.keywords).toBe('approved-first');
  });

  it("cancels a run while a step is running; that step's later writes do not resurrect it", async () => {
    // Prepare: the read tool of the next step blocks until released
    const read = holdPageCalls('getPage');
    const started = await runtime
      .client('editor')
      .startRun({ body: { taskId: 'page-metadata', input: 'What is on page 14?' } });
    const runId = bodyOf(started).runId as string;
    await read.entered();
    const before = await runtime.client('editor').getRun({ path: { id: runId } });

    // Act
    const answer = await cancel(runId, { reason: 'Too slow.' });
    read.release();
    // The blocked step goes on after the cancel; its conditional save is refused.
    const refusedStep = await eventually(async () =>
      runtime.logLines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.message === 'step failed' && line.runId === runId),
    );
    const after = await runtime.dependencies.runs.getRunRecord(runId);
    const view = await runtime.client('editor').getRun({ path: { id: runId } });

    // Assess
    expect(bodyOf(before).status).toBe('running');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'cancelled', cancelledBy: 'editor', repeated: false });
    expect(after).toMatchObject({
      status: 'cancelled',
      cancelledBy: 'editor',
      cancellationReason: 'Too slow.',
    });
    expect(after?.updatedAt).toBe(bodyOf(answer).cancelledAt);
    expect(refusedStep).toMatchObject({ state: 'ExecuteTools', code: 'conflict' });
    expect(bodyOf(view).transcript.messages).toBe(bodyOf(before).transcript.messages);
  });

  it('takes down the card a pausing step puts up after the run was cancelled', async () => {
    // Prepare: the preview read of the pausing step blocks until released
    const read = holdPageCalls('getPage');
    const started = await runtime
      .client('editor')
      .startRun({ body: { taskId: 'page-metadata', input: "Set the keywords of page 12 to 'paused-late'" } });
    const runId = bodyOf(started).runId as string;
    await read.entered();

    // Act
    const answer = await cancel(runId);
    read.release();
    const refusedStep = await eventually(async () =>
      runtime.logLines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.message === 'step failed' && line.runId === runId),
    );
    const inbox = await runtime.client('approver').listInbox({ query: { limit: 100 } });

    // Assess
    expect(answer.status).toBe(200);
    expect(refusedStep).toMatchObject({ state: 'AwaitApproval', code: 'conflict' });
    expect(await runtime.dependencies.runs.getCard(runId)).toMatchObject({
      state: 'closed',
      closedBecause: 'ended',
    });
    expect(bodyOf(inbox).cards.map((card: { runId: string }) => card.runId)).not.toContain(runId);
    expect((await runtime.dependencies.runs.getRunRecord(runId))?.status).toBe('cancelled');
  });

  it('finishes a cancel whose request failed after its claim when the run is driven again', async () => {
    // Prepare: the claim is on record, the run still says waiting (the request died in between)
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 14 to 'half-cancelled'");
    await runtime.dependencies.runs.claimDecision({
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      channel: 'api',
      runId,
      turn,
      decision: 'cancel',
      digest,
      decidedBy: 'editor',
      decidedAt: new Date().toISOString(),
      reason: 'Half-way.',
      cardShown: NO_CARD_SHOWN,
      claimId: 'claim-half-cancelled',
    });

    // Act: a re-drive (a restart, a redriven execution) runs Prepare again
    await runtime.runner.start({ runId, executionName: `${runId}-redrive` });
    const view = await eventually(async () => {
      const response = await runtime.client('editor').getRun({ path: { id: runId } });
      return bodyOf(response).status === 'cancelled' ? bodyOf(response) : undefined;
    });
    const repeated = await cancel(runId);

    // Assess
    expect(view.cancellation).toEqual({ by: 'editor', reason: 'Half-way.' });
    expect(await runtime.dependencies.runs.getCard(runId)).toMatchObject({
      state: 'closed',
      closedBecause: 'cancelled',
    });
    expect(repeated.status).toBe(200);
    expect(repeated.body).toMatchObject({ cancelledBy: 'editor', reason: 'Half-way.', repeated: true });
  });
});
