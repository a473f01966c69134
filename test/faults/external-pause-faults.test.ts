import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decide } from '../e2e/approvers-support.js';
import { demoTurn, machineClientOf } from '../e2e/external-runs-support.js';
import { bodyOf } from '../support/api-answers.js';
import { type HeldCall, holdCall, type InjectedFault, injectFault } from '../support/fault-seams.js';
import { eventually, startTestRuntime, type TestRuntime } from '../support/local-runtime.js';

/** The pause's one read and the write that marks the run waiting (as in pause-faults.test.ts). */
/** The pause's read of the turn's decision (beside the run's and the card's, at once). */
const decisionRead = (input: string) => input.includes('DECISION#');
const runWaiting = (input: string) => input.includes('pendingToolNames') && input.includes('"waiting"');

/**
 * An external run's pause under the faults of issue #29: a retried AwaitApproval that finds its
 * turn approved on record carries the approval on, and for an external run that is its answer
 * (RecordExternalDecision), never ExecuteTools: countersign runs no tool of an agent elsewhere.
 */
describe('an external run’s pause under faults', () => {
  let runtime: TestRuntime;
  let faults: Array<InjectedFault | HeldCall> = [];

  beforeAll(async () => {
    runtime = await startTestRuntime();
  });

  afterEach(() => {
    for (const fault of faults) fault.remove();
    faults = [];
  });

  afterAll(async () => {
    await runtime?.stop();
  });

  it('answers the caller once when its turn was approved while its pause was retried', async () => {
    // Prepare: the first attempt put the card and failed marking the run waiting; the retry is
    // held at its read of the turn's decision until an approver decided on the card the first put.
    faults.push(
      injectFault(runtime.dynamo.client, {
        command: 'UpdateItem',
        matching: runWaiting,
        when: 'before-applied',
      }),
    );
    const retry = holdCall(runtime.dynamo.client, { command: 'GetItem', matching: decisionRead, nth: 2 });
    faults.push(retry);
    const agent = machineClientOf(runtime);
    const { runId } = bodyOf(await agent.submitExternalRun({ body: demoTurn() }), 202);

    // Act
    await retry.entered();
    const card = await runtime.dependencies.runs.getCard(runId);
    const decision = await decide(runtime, runId, { digest: card?.digest ?? '', decision: 'approve' });
    retry.release();
    const answer = bodyOf(await agent.getExternalRun({ path: { id: runId }, query: { wait: 20 } }));
    const announced = await eventually(async () => {
      const events = runtime.externalNotifications.filter((event) => event.runId === runId);
      return events.length > 0 ? events : undefined;
    });

    // Assess
    expect(decision.status).toBe(200);
    expect(answer).toMatchObject({ runId, status: 'decided' });
    expect(answer.calls?.map((call: { decision: string }) => call.decision)).toEqual([
      'approved',
      'approved',
      'approved',
    ]);
    expect(announced).toEqual([expect.objectContaining({ runId, status: 'decided' })]);
    expect(await runtime.dependencies.runs.getRunRecord(runId)).toMatchObject({ status: 'completed' });
    expect(
      runtime.logLines.some((line) => line.includes('approval wait not reopened: the turn is decided')),
    ).toBe(true);
  });
});
