import { afterEach, describe, expect, it } from 'vitest';
import type { AwaitingApprovalEvent } from '../../lambdas/core/ports.js';
import { decide, recordWritesAndDeliveries } from '../e2e/approvers-support.js';
import { bodyOf } from '../support/api-answers.js';
import { holdCall, killWhileHeld } from '../support/fault-seams.js';
import {
  eventually,
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';

/** A pause's write that marks the run waiting (it alone sets `pendingToolNames` to waiting). */
const runWaiting = (input: string) => input.includes('pendingToolNames') && input.includes('"waiting"');
/** The call ledger's record of a call that ran. */
const ledgerRan = (input: string) => input.includes('CALL#') && input.includes('"ran"');

/**
 * Kill between steps (issue #29): `npm start` stopped in the middle of a step, between two of its
 * writes, and started again on the same data. The run resumes from what was written, and nothing
 * is applied twice.
 */
describe('the local runtime killed between writes and restarted on the same data', () => {
  let runtime: TestRuntime | undefined;

  afterEach(async () => {
    await runtime?.stop();
    if (runtime) await removeTestData(runtime);
    runtime = undefined;
  });

  it('resumes into the same card, sends its one event, and applies the approval once', async () => {
    // Prepare: the process stops after the card was put, before the run was marked waiting.
    const first = await startTestRuntime();
    runtime = first;
    const notified: AwaitingApprovalEvent[] = [];
    first.dependencies.notifier.runAwaitingApproval = async (event) => {
      notified.push(event);
    };
    const killed = holdCall(first.dynamo.client, { command: 'UpdateItem', matching: runWaiting });
    const started = await first.client('editor').startRun({
      body: { taskId: 'page-metadata', input: "Set the keywords of page 12 to 'after restart'" },
    });
    const runId = bodyOf(started).runId;
    await killed.entered();
    const cardBefore = await first.dependencies.runs.getCard(runId);
    await killWhileHeld(first, killed);

    // Act
    const second = await startTestRuntime({ baseDirectory: first.baseDirectory });
    runtime = second;
    second.dependencies.notifier.runAwaitingApproval = async (event) => {
      notified.push(event);
    };
    const pageWrites: string[] = [];
    recordWritesAndDeliveries(second, { pageWrites, deliveries: [] });
    const view = await eventually(async () => {
      const current = bodyOf(await second.client('editor').getRun({ path: { id: runId } }));
      return current.status === 'waiting' && notified.length > 0 ? current : undefined;
    });
    const answer = await decide(second, runId, { digest: view.digest as string, decision: 'approve' });
    const finished = await settle(second, runId, 'editor', view.turn as number);

    // Assess
    expect(cardBefore?.state).toBe('open');
    expect(view.digest).toBe(cardBefore?.digest);
    expect(notified.filter((event) => event.runId === runId)).toHaveLength(1);
    expect(answer.status).toBe(200);
    expect(finished.status).toBe('completed');
    expect(pageWrites).toEqual([JSON.stringify({ keywords: 'after restart' })]);
  });

  it('finishes the call from its key: the page is written once, the run completes', async () => {
    // Prepare: the process stops after the page write landed, before the ledger recorded it.
    const first = await startTestRuntime();
    runtime = first;
    const firstWrites: string[] = [];
    recordWritesAndDeliveries(first, { pageWrites: firstWrites, deliveries: [] });
    const killed = holdCall(first.dynamo.client, {
      command: 'PutItem',
      matching: ledgerRan,
    });
    const { runId, view } = await startRunAndSettle(first, "Set the author of page 14 to 'Einmal'");
    const answer = await decide(first, runId, { digest: view.digest as string, decision: 'approve' });
    await killed.entered();
    await killWhileHeld(first, killed);

    // Act
    const second = await startTestRuntime({ baseDirectory: first.baseDirectory });
    runtime = second;
    const secondWrites: string[] = [];
    recordWritesAndDeliveries(second, { pageWrites: secondWrites, deliveries: [] });
    const finished = await settle(second, runId, 'editor', view.turn as number);

    // Assess
    expect(answer.status).toBe(200);
    expect(firstWrites).toEqual([JSON.stringify({ author: 'Einmal' })]);
    expect(secondWrites).toEqual([]);
    expect(finished.status).toBe('completed');
    expect((await second.dependencies.pages.getPage('14'))?.author).toBe('Einmal');
    expect(bodyOf(await second.client('editor').getRun({ path: { id: runId } })).transcript.toolCalls).toBe(
      1,
    );
  });
});
