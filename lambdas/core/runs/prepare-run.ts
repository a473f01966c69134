import { CountersignError } from '../errors.js';
import type { RunDependencies } from '../run-dependencies.js';
import { TERMINAL_STATUSES } from '../run-record.js';
import { TEXTS } from '../texts.js';
import { finishClaimedCancel } from './cancel-run.js';

export interface PrepareRunInput {
  runId: string;
  executionId: string;
}

export interface PrepareRunOutput {
  runId: string;
  turn: number;
  /**
   * For a run driven again while it waits (a re-drive): `await` re-enters the approval wait;
   * `execute` or `reject` carries out a decision already on record whose delivery was lost.
   */
  next: 'model' | 'await' | 'execute' | 'reject' | 'answer';
  /**
   * The run's owner (an identifier). No step reads it: an execution started before 0.3 names
   * `$.owner` in its AwaitApproval payload, so the output keeps it while one may still run.
   */
  owner: string;
  /**
   * `external`: an agent that runs elsewhere submitted the turn. It waits on its card at once
   * (`next: 'await'`), and once decided (`answer`: a decision already on record) the workflow
   * records the answer instead of running or rejecting anything. Absent on a model run.
   */
  kind?: 'external';
}

/** Prepare reads and moves the run record only, never its sealed state. */
export type PrepareRunDependencies = Pick<RunDependencies, 'runs' | 'clock'>;

/**
 * First step of every execution. A run continues as a new execution when one execution's
 * history would grow too long; the new execution starts counting its turns here.
 */
export async function prepareRun(
  dependencies: PrepareRunDependencies,
  input: PrepareRunInput,
): Promise<PrepareRunOutput> {
  // The record alone: Prepare never touches the sealed state (nor its S3 overflow).
  const record = await dependencies.runs.getRunRecord(input.runId);
  if (!record) throw new CountersignError('not-found', TEXTS.runNotFound);
  if (TERMINAL_STATUSES.has(record.status)) {
    throw new CountersignError('conflict', `The run has already ended (${record.status}).`);
  }
  const isNewExecution = record.executionId !== undefined && record.executionId !== input.executionId;
  if (record.executionId !== input.executionId) {
    await dependencies.runs.updateRun(
      input.runId,
      {
        executionId: input.executionId,
        executionCount: isNewExecution ? record.executionCount + 1 : record.executionCount,
        executionStartTurn: record.turn,
        updatedAt: dependencies.clock.now().toISOString(),
      },
      { expectStatus: ['running', 'waiting'] },
    );
  }
  const kind = record.kind === 'external' ? ({ kind: 'external' } as const) : {};
  if (record.status !== 'waiting') {
    // An external run has no model turn: its first step is the wait on its card.
    const next = record.kind === 'external' ? 'await' : 'model';
    return { runId: input.runId, turn: record.turn, next, owner: record.owner, ...kind };
  }
  // The claim is written before the token is used: a decision on record is the decision.
  const decision = await dependencies.runs.getDecision(input.runId, record.turn);
  // A cancel took this turn's claim but did not finish: the claim is the cancel, so finish it.
  if (decision?.decision === 'cancel') {
    await finishClaimedCancel(dependencies, decision);
    throw new CountersignError('conflict', 'The run was cancelled.');
  }
  const next =
    decision === undefined
      ? 'await'
      : record.kind === 'external'
        ? 'answer'
        : decision.decision === 'reject'
          ? 'reject'
          : 'execute';
  return { runId: input.runId, turn: record.turn, next, owner: record.owner, ...kind };
}
