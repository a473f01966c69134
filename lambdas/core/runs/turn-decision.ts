import type { CallChoice } from '../approvals/call-choices.js';
import { type DecisionRecord, type EditOnRecord, readEditsOnRecord } from '../approvals/decision-record.js';
import type { RunDependencies } from '../run-dependencies.js';

/** What the decision on record does with a turn's calls, as execution reads it. */
export interface TurnDecision {
  /** The decision on record; none for a turn that never paused. */
  record: DecisionRecord | undefined;
  /** Calls an approver rejected in a per-call decision, by index: they do not run. */
  refused: ReadonlyMap<number, CallChoice>;
  /** An edit: the calls it rewrote, with their new arguments (they go on a fresh card). */
  edits: EditOnRecord[];
}

/**
 * The turn's decision as execution applies it: read once, so the approval coverage, the calls
 * that run and the calls refused all follow the same record.
 *
 * @example
 * const decision = await readTurnDecision(dependencies, runId, turn);
 * if (decision.refused.has(1)) // call 1 is not run; the model is told it was denied
 */
export async function readTurnDecision(
  dependencies: Pick<RunDependencies, 'runs'>,
  runId: string,
  turn: number,
): Promise<TurnDecision> {
  const record = await dependencies.runs.getDecision(runId, turn);
  const refused = new Map(
    (record?.decision === 'approve' ? (record.choices ?? []) : [])
      .filter((choice) => choice.decision === 'reject')
      .map((choice) => [choice.index, choice]),
  );
  return {
    record,
    refused,
    edits: record?.decision === 'edit' ? readEditsOnRecord(record) : [],
  };
}
