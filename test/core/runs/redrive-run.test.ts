import { describe, expect, it } from 'vitest';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { markRunFailed } from '../../../lambdas/core/runs/end-run.js';
import { executeTools } from '../../../lambdas/core/runs/execute-tools.js';
import { prepareRun } from '../../../lambdas/core/runs/prepare-run.js';
import { redriveRun } from '../../../lambdas/core/runs/redrive-run.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import {
  APPROVER,
  createHarness,
  digestShownTo,
  OWNER,
  PAGE_ID,
  person,
  refusalOf,
  startPausedRun,
  type UseCaseHarness,
} from './use-case-harness.js';

/** The executions redrives started (the runs' own first starts left out). */
function redriveStarts(harness: UseCaseHarness) {
  return harness.executions.started.filter((started) => started.executionName.includes('-redrive-'));
}

/** A paused run whose approval is on record and whose ExecuteTools then failed transiently. */
async function approvedThenFailedInExecution(harness: UseCaseHarness) {
  const paused = await startPausedRun(harness);
  const digest = await digestShownTo(harness, APPROVER, paused.runId);
  await decideRun(harness.dependencies, APPROVER, paused.runId, { digest, decision: 'approve' });
  await markRunFailed(harness.dependencies, {
    runId: paused.runId,
    failure: { Error: 'countersign.internal', Cause: '{"errorMessage":"Internal error."}' },
    failedStep: { step: 'ExecuteTools', transient: true },
  });
  return paused;
}

describe('redriveRun', () => {
  it('puts a run that failed while its approval was on record back to waiting: the approval is carried out, never asked again', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await approvedThenFailedInExecution(harness);
    const failed = await harness.runs.getRunRecord(paused.runId);

    // Act
    const redriven = await redriveRun(harness.dependencies, OWNER, paused.runId);
    const prepared = await prepareRun(harness.dependencies, {
      runId: paused.runId,
      executionId: `arn:execution:${paused.runId}-redrive-1`,
    });
    const executed = await executeTools(harness.dependencies, { runId: paused.runId, turn: paused.turn });

    // Assess
    expect(failed).toMatchObject({
      status: 'failed',
      failure: { step: 'ExecuteTools', turn: paused.turn, transient: true, resumeAs: 'waiting' },
    });
    expect(redriven).toMatchObject({
      kind: 'redriven',
      status: 'waiting',
      failedStep: 'ExecuteTools',
      redrives: 1,
      redrivenBy: OWNER.userId,
      repeated: false,
    });
    expect(redriveStarts(harness)).toEqual([
      { runId: paused.runId, executionName: `${paused.runId}-redrive-1` },
    ]);
    expect(prepared.next).toBe('execute');
    expect(executed.route).toBe('model');
    expect((await harness.dependencies.pages.getPage(PAGE_ID))?.title).toBe('Spring sale');
    const record = await harness.runs.getRunRecord(paused.runId);
    expect(record).toMatchObject({ status: 'running', redrive: { count: 1 } });
    expect(record?.endedAt).toBeUndefined();
    expect(record?.failureReason).toBeUndefined();
    expect(harness.metrics.counts.get('RunsRedriven')).toBe(1);
  });

  it('lets one of two redrives racing win; the other answers the same redrive, and the same execution name is started', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await approvedThenFailedInExecution(harness);

    // Act
    const outcomes = await Promise.all([
      redriveRun(harness.dependencies, OWNER, paused.runId),
      redriveRun(harness.dependencies, OWNER, paused.runId),
    ]);

    // Assess
    expect(outcomes.map((outcome) => outcome.repeated).sort()).toEqual([false, true]);
    expect(new Set(outcomes.map((outcome) => outcome.redrivenAt)).size).toBe(1);
    expect(new Set(redriveStarts(harness).map((started) => started.executionName))).toEqual(
      new Set([`${paused.runId}-redrive-1`]),
    );
    expect(harness.metrics.counts.get('RunsRedriven')).toBe(1);
  });

  it('finishes a redrive whose start failed half-way when it is asked again', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await approvedThenFailedInExecution(harness);
    harness.executions.failNext = { call: 'start', error: new Error('ThrottlingException') };

    // Act
    const first = await redriveRun(harness.dependencies, OWNER, paused.runId).catch(
      (error: unknown) => error,
    );
    const again = await redriveRun(harness.dependencies, OWNER, paused.runId);

    // Assess
    expect(first).toBeInstanceOf(Error);
    expect(again).toMatchObject({ repeated: true, redrives: 1, status: 'waiting' });
    expect(redriveStarts(harness)).toEqual([
      { runId: paused.runId, executionName: `${paused.runId}-redrive-1` },
    ]);
  });

  it('refuses a failure another attempt would meet again, a run that did not fail, and a failure never recorded', async () => {
    // Prepare
    const harness = createHarness();
    const refused = await startPausedRun(harness);
    await markRunFailed(harness.dependencies, {
      runId: refused.runId,
      failure: { Error: 'countersign.model-failed', Cause: 'The model provider refused the request.' },
      failedStep: { step: 'ModelTurn', transient: false },
    });
    const waiting = await startPausedRun(harness);
    const unrecorded = await startPausedRun(harness);
    await harness.runs.updateRun(unrecorded.runId, { status: 'failed' }, {});

    // Act
    const notTransient = await refusalOf(redriveRun(harness.dependencies, OWNER, refused.runId));
    const notFailed = await refusalOf(redriveRun(harness.dependencies, OWNER, waiting.runId));
    const neverRecorded = await refusalOf(redriveRun(harness.dependencies, OWNER, unrecorded.runId));

    // Assess
    expect(notTransient).toMatchObject({
      code: 'conflict',
      message: TEXTS.redriveNotTransient('ModelTurn', 'countersign.model-failed'),
    });
    expect(notFailed).toMatchObject({ code: 'conflict', message: TEXTS.redriveNotFailed('waiting') });
    expect(neverRecorded).toMatchObject({ code: 'conflict', message: TEXTS.redriveUnrecorded });
    expect(redriveStarts(harness)).toEqual([]);
  });

  it('answers anyone but the owner and admins as if the run did not exist; an admin may redrive', async () => {
    // Prepare
    const harness = createHarness();
    const paused = await approvedThenFailedInExecution(harness);
    const admin = person('ada', { grants: ['admin'] });

    // Act
    const stranger = await refusalOf(redriveRun(harness.dependencies, APPROVER, paused.runId));
    const byAdmin = await redriveRun(harness.dependencies, admin, paused.runId);

    // Assess
    expect(stranger).toMatchObject({ code: 'not-found', message: TEXTS.runNotFound });
    expect(byAdmin).toMatchObject({ redrivenBy: 'ada', repeated: false });
  });
});
