import { CountersignError } from '../errors.js';
import type { ToolResultBlock } from '../model.js';
import type { RunDependencies } from '../run-dependencies.js';
import { refusedCallOutcome } from './call-outcomes.js';
import { type StepInput, saveResults } from './execute-tools.js';
import { loadRun, unsealRunState } from './load-run.js';

/** What recording a rejection for the model reads, reseals and counts. */
export type RecordRejectionDependencies = Pick<
  RunDependencies,
  'runs' | 'sealer' | 'clock' | 'logger' | 'metrics'
>;

/**
 * Tells the model its proposed calls were denied, and lets it take another turn. The
 * approver's reason (each call's own, for a per-call rejection) reaches the model only when the
 * configuration allows it.
 */
export async function recordRejection(
  dependencies: RecordRejectionDependencies,
  input: StepInput,
): Promise<StepInput> {
  const run = await loadRun(dependencies, input.runId);
  if (run.record.turn !== input.turn) {
    throw new CountersignError('conflict', `The run is at turn ${run.record.turn}, not ${input.turn}.`);
  }
  const state = await unsealRunState(dependencies, run);
  if (state.pendingCalls.length === 0) return input;
  const decision = await dependencies.runs.getDecision(input.runId, input.turn);
  // A per-call rejection gives each call its own reason.
  const reasons = new Map((decision?.choices ?? []).map((choice) => [choice.index, choice.reason]));
  const results: ToolResultBlock[] = state.pendingCalls.map((call) => ({
    type: 'tool_result',
    callId: call.callId,
    ...refusedCallOutcome(
      call.tool,
      reasons.has(call.index) ? reasons.get(call.index) : decision?.reason,
      run.record.policy.revealRejectionReason,
    ),
  }));
  await saveResults(dependencies, run.record.status, input, state, results);
  dependencies.logger.info('rejection recorded', { runId: input.runId, turn: input.turn });
  return input;
}
