import { CountersignError } from '../errors.js';
import type { RunDependencies } from '../run-dependencies.js';
import type { RunTools } from '../tools/mcp/run-tools.js';
import type { DecisionRecord } from './decision-record.js';
import {
  type CallGuard,
  classifyCallForExecution,
  isGuardedMoreThan,
  needsHumanApproval,
  stricterGuard,
} from './needs-human-approval.js';
import type { PendingCall } from './pending-call.js';
import { guardOnCard } from './stored-card.js';
import { computeTurnDigest } from './turn-digest.js';

/** Whether what execution is about to run is covered by what the turn's approval was taken under. */
export type ApprovalCoverage =
  | { kind: 'covered' }
  /**
   * A call needs more than the approval covered (a read became a write, a call nobody approved now
   * needs approval): nothing runs, and the calls wait on a fresh card guarded at least as `guards`.
   */
  | { kind: 'stricter'; guards: ReadonlyMap<number, CallGuard>; stricterTools: string[] };

/**
 * Execution runs only what the approval covered. Each call is classified as it is about to run
 * (its tool as listed now; one that will not run needs nothing) and compared with the guard the
 * turn was decided under: the card's, when an approval of exactly this turn is on record, and
 * `none` when the turn never paused. A call guarded more now than then makes the turn stricter.
 *
 * The gates follow from the guarded calls alone (the tool gate and the record gate cover their
 * tools, the floor's `fourEyesTools` their names, k-of-n every guarded turn): when every call
 * guarded now was guarded on the card, no gate asks more than the approval passed (the floor is
 * the deployment's: one tightened after a decision was delivered applies to decisions after it).
 *
 * Reads the card when a call needs approval (the caller hands in the decision). An approval of another
 * digest, a rejection or a cancel on record refuses (`forbidden`), as before.
 *
 * @example
 * const coverage = await checkApprovalCoverage(dependencies, { runId, turn, calls, runTools, decision });
 * if (coverage.kind === 'stricter') // put the calls on a fresh card
 */
export async function checkApprovalCoverage(
  dependencies: Pick<RunDependencies, 'runs'>,
  input: {
    runId: string;
    turn: number;
    calls: readonly PendingCall[];
    runTools: RunTools;
    /** The turn's decision on record, as the caller read it (`undefined`: none). */
    decision: DecisionRecord | undefined;
    /** Calls that will not run (a per-call decision rejected them): they need nothing. */
    notRun?: ReadonlySet<number>;
  },
): Promise<ApprovalCoverage> {
  const runs = (call: PendingCall) => !(input.notRun?.has(call.index) ?? false);
  const now = new Map(
    input.calls
      .filter(runs)
      .map((call) => [call.index, classifyCallForExecution(call, input.runTools.confirmedTool(call.tool))]),
  );
  if (![...now.values()].some(needsHumanApproval)) return { kind: 'covered' };
  const covered = await readCoveredGuards(dependencies, input);
  // A call that will not run is not in `now`: 'none' is guarded more than nothing.
  const stricter = input.calls.filter((call) =>
    isGuardedMoreThan(now.get(call.index) ?? 'none', covered(call)),
  );
  if (stricter.length === 0) return { kind: 'covered' };
  return {
    kind: 'stricter',
    // The next pause starts from the strictest of the turn's, the card's and execution's view.
    guards: new Map(
      input.calls.map((call) => [
        call.index,
        [call.guard ?? 'none', covered(call), now.get(call.index) ?? 'none'].reduce(stricterGuard),
      ]),
    ),
    stricterTools: [...new Set(stricter.map((call) => call.tool))],
  };
}

/** How each call was guarded when the turn's approval was taken; `none` for a turn that never paused. */
async function readCoveredGuards(
  dependencies: Pick<RunDependencies, 'runs'>,
  input: { runId: string; turn: number; calls: readonly PendingCall[]; decision: DecisionRecord | undefined },
): Promise<(call: PendingCall) => CallGuard> {
  const { decision } = input;
  if (decision === undefined) return () => 'none';
  const digest = computeTurnDigest(input.runId, input.turn, input.calls);
  if (decision.decision !== 'approve' || decision.digest !== digest) {
    throw new CountersignError(
      'forbidden',
      'No approval of this turn is on record; its writes were not executed.',
    );
  }
  const card = await dependencies.runs.getCard(input.runId);
  // A card of another turn cannot say what this approval covered: it covers nothing.
  if (card === undefined || card.turn !== input.turn || card.digest !== digest) return () => 'none';
  return (call) => guardOnCard(card, call);
}
