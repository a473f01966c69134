import type { DecisionRecord } from '../approvals/decision-record.js';
import { CountersignError } from '../errors.js';
import type { ExternalRunAnsweredEvent } from '../ports.js';
import type { RunDependencies } from '../run-dependencies.js';
import { loadRun, unsealRunState } from '../runs/load-run.js';
import { answerForCall } from './call-answer.js';
import { callerToolName } from './external-tool-names.js';

/** The sealer opens the run state once the run is answered: which calls an approver edited. */
export type RecordExternalDecisionDependencies = Pick<
  RunDependencies,
  'runs' | 'sealer' | 'clock' | 'logger' | 'metrics' | 'notifier'
>;

/**
 * `answered`: the run ended and its answer went out. `edited`: an approver edited calls, a new
 * proposal and no answer yet: the workflow puts the edited calls on a fresh card (ExecuteTools
 * reopens the turn, as for every run's edit, then AwaitApproval pauses again).
 */
export type RecordExternalDecisionOutcome = { kind: 'answered' } | { kind: 'edited' };

/**
 * The step that ends an external run once its wait is over (`RecordExternalDecision`): a turn
 * decided on its card completes the run (the decision record is its answer), and the outside
 * world is told by the `External Run Answered` event; a run whose window closed (MarkExpired
 * ended it) only announces that; an edit ends nothing (`edited`). Idempotent: a retried step
 * finds the run completed and announces again, which EventBridge consumers must bear anyway (it
 * delivers at least once).
 *
 * @example
 * const outcome = await recordExternalDecision(dependencies, { runId, turn: 0 });
 */
export async function recordExternalDecision(
  dependencies: RecordExternalDecisionDependencies,
  input: { runId: string; turn: number },
): Promise<RecordExternalDecisionOutcome> {
  const record = await dependencies.runs.getRunRecord(input.runId);
  if (!record) throw new CountersignError('not-found', 'The run does not exist.');
  if (record.kind !== 'external') throw new CountersignError('conflict', 'The run is not an external run.');
  const decision = await dependencies.runs.getDecision(input.runId, record.turn);
  const ended = record.status !== 'running' && record.status !== 'waiting';
  if (!ended) {
    if (!decision || decision.decision === 'cancel') {
      throw new CountersignError('conflict', 'The external run has no decision on record.');
    }
    if (decision.decision === 'edit') {
      dependencies.logger.info('external run edited: the edit waits on a fresh card', {
        runId: input.runId,
        turn: record.turn,
      });
      return { kind: 'edited' };
    }
    const now = dependencies.clock.now().toISOString();
    const outcome = await dependencies.runs.updateRun(
      input.runId,
      { status: 'completed', endedAt: now, updatedAt: now },
      { expectStatus: ['running', 'waiting'], removeFields: ['pendingToolNames'] },
    );
    if (outcome.kind === 'written') {
      dependencies.metrics.count('ExternalRunsAnswered', 1, { outcome: decision.decision });
      dependencies.logger.info('external run answered', { runId: input.runId, decision: decision.decision });
    }
  }
  const status = ended && record.status !== 'completed' ? record.status : 'completed';
  if (status !== 'completed' && status !== 'expired') return { kind: 'answered' };
  const event: ExternalRunAnsweredEvent = {
    runId: input.runId,
    owner: record.owner,
    configurationId: record.configurationId,
    status: status === 'completed' ? 'decided' : 'expired',
    calls:
      status === 'completed' && decision && decision.decision !== 'cancel'
        ? await answeredCalls(dependencies, input.runId, decision)
        : await expiredCalls(dependencies, input.runId),
  };
  if (status === 'expired') dependencies.metrics.count('ExternalRunsAnswered', 1, { outcome: 'expired' });
  await dependencies.notifier.externalRunAnswered?.(event);
  return { kind: 'answered' };
}

/**
 * Each call's answer as the event says it: the decision and, for an approved call an approver
 * edited, who edited it. No arguments and no reason: an event names, the API answers.
 */
async function answeredCalls(
  dependencies: RecordExternalDecisionDependencies,
  runId: string,
  decision: DecisionRecord,
): Promise<ExternalRunAnsweredEvent['calls']> {
  const state = await unsealRunState(dependencies, await loadRun(dependencies, runId));
  return state.pendingCalls.map((call) => {
    const answer = answerForCall(decision, call);
    return {
      index: call.index,
      tool: callerToolName(call.tool),
      decision: answer.decision,
      ...(answer.decision === 'approved' && answer.edited ? { edited: answer.edited } : {}),
    };
  });
}

/** The calls of a run whose window closed, from its card: no decision, nothing unsealed. */
async function expiredCalls(
  dependencies: RecordExternalDecisionDependencies,
  runId: string,
): Promise<ExternalRunAnsweredEvent['calls']> {
  const card = await dependencies.runs.getCard(runId);
  return (card?.callGuards ?? []).map((call) => ({ index: call.index, tool: callerToolName(call.tool) }));
}
