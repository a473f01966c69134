import { checkApprovalCoverage } from '../approvals/approval-coverage.js';
import { describeCallRunnability } from '../approvals/call-runnability.js';
import type { CallGuard } from '../approvals/needs-human-approval.js';
import type { RunStateCall } from '../approvals/pending-call.js';
import { type ResolvedCall, resolveCalls } from '../approvals/resolve-calls.js';
import type { CardClosing } from '../approvals/stored-card.js';
import { CountersignError, describeErrorClass } from '../errors.js';
import type { ToolResultBlock } from '../model.js';
import { TEXTS } from '../texts.js';
import { toolsForPendingCalls } from '../tools/mcp/run-tools.js';
import { loadRun, unsealRunState } from './load-run.js';
import { checkPreconditions } from './record-preconditions.js';
import type { RunDependencies, ToolStepDependencies } from './run-dependencies.js';
import { TERMINAL_STATUSES } from './run-record.js';
import type { RunState } from './run-state.js';
import { sealJson } from './sealed-json.js';

export interface StepInput {
  runId: string;
  turn: number;
}

/**
 * Where the run goes after ExecuteTools: `model` with the results recorded, or `review` when a
 * record changed after its card was shown and the same calls wait on a fresh card at `turn`.
 */
export interface ExecuteToolsOutput {
  runId: string;
  turn: number;
  route: 'model' | 'review';
  /** The run's owner (an identifier): the pause reads their current record with the run. */
  owner: string;
}

/**
 * Runs the pending calls of a turn under the run's acting user and hands the results to the
 * next model turn. A write runs only when an approval of exactly this turn's digest is on
 * record, taken under a classification at least as strict as the one it runs under: a write
 * whose approval cannot be shown does not execute, and one that became more guarded since its
 * card waits on a fresh card.
 */
export async function executeTools(
  stepDependencies: ToolStepDependencies,
  input: StepInput,
): Promise<ExecuteToolsOutput> {
  let dependencies = stepDependencies;
  const run = await loadRun(dependencies, input.runId);
  const { owner } = run.record;
  // A cancelled (or otherwise ended) run writes nothing more, even if its execution still ran.
  if (TERMINAL_STATUSES.has(run.record.status)) {
    throw new CountersignError('conflict', `The run has already ended (${run.record.status}).`);
  }
  if (run.record.turn === input.turn + 1) {
    // A retried step whose first attempt reopened the turn for review: go to that review.
    const reopened = await unsealRunState(dependencies, run);
    if (reopened.reopenedFromTurn === input.turn && reopened.pendingCalls.length > 0) {
      return { runId: input.runId, turn: run.record.turn, route: 'review', owner };
    }
  }
  if (run.record.turn !== input.turn) {
    throw new CountersignError('conflict', `The run is at turn ${run.record.turn}, not ${input.turn}.`);
  }
  const done: ExecuteToolsOutput = { runId: input.runId, turn: input.turn, route: 'model', owner };
  const state = await unsealRunState(dependencies, run);
  if (state.pendingCalls.length === 0) return done; // a retried step whose results are recorded
  // The run's MCP tools as their servers list them now: a server that turned a tool into a
  // write since the card was put makes it need an approval this turn does not have.
  const runTools = await toolsForPendingCalls(dependencies, state.pendingCalls, run.record.configurationId);
  dependencies = { ...dependencies, tools: runTools.tools };
  const coverage = await checkApprovalCoverage(dependencies, {
    ...input,
    calls: state.pendingCalls,
    runTools,
  });
  if (coverage.kind === 'stricter') {
    return reopenForReview(dependencies, run.record.status, input, state, owner, {
      kind: 'guard-raised',
      guards: coverage.guards,
      tools: coverage.stricterTools,
    });
  }

  const actingUser = await dependencies.users.getUser(run.record.owner);
  if (!actingUser) throw new CountersignError('forbidden', 'The user who started the run no longer exists.');
  const context = { actingUser, runId: input.runId, pages: dependencies.pages };
  // Each call's tool and arguments, parsed once for the preconditions and the run.
  const resolved = resolveCalls(state.pendingCalls, dependencies.tools);
  const check = await checkPreconditions(resolved, { actingUser, context, logger: dependencies.logger });
  if (check.kind === 'changed') {
    return reopenForReview(dependencies, run.record.status, input, state, owner, {
      kind: 'record-changed',
      changedIndexes: check.changedIndexes,
    });
  }
  const results: ToolResultBlock[] = [];
  for (const resolvedCall of resolved) {
    const { call } = resolvedCall;
    const unreadable = check.unreadable.get(call.index);
    results.push({
      type: 'tool_result',
      callId: call.callId,
      ...(unreadable === undefined
        ? await runCall(dependencies, resolvedCall, actingUser, input.runId)
        : { content: TEXTS.toolFailed(call.tool, unreadable), isError: true }),
    });
  }
  await saveResults(dependencies, run.record.status, input, state, results);
  return done;
}

/** Why a turn's approval is not applied and its calls wait on a fresh card. */
type Reopening =
  /** A record changed after the card was shown (a tool's precondition). */
  | { kind: 'record-changed'; changedIndexes: ReadonlySet<number> }
  /** A call is guarded more now than when its card was decided; `guards` is where the next pause starts. */
  | { kind: 'guard-raised'; guards: ReadonlyMap<number, CallGuard>; tools: string[] };

/**
 * The turn's approval cannot be applied: nothing of the turn runs, and the same calls move to the
 * next turn number, where AwaitApproval seals fresh versions, previews, guards and digest. The
 * approval on record stays in the audit; it cannot carry over (a decision names its turn and
 * digest). The transcript gets no result, so the model is never told a write happened. A
 * re-review takes a turn, so a record edited in a loop cannot keep a run paused past maxTurns.
 */
async function reopenForReview(
  dependencies: Pick<RunDependencies, 'runs' | 'sealer' | 'clock' | 'logger'>,
  status: string,
  input: StepInput,
  state: RunState,
  owner: string,
  reopening: Reopening,
): Promise<ExecuteToolsOutput> {
  const nextTurn = input.turn + 1;
  const nextState: RunState = {
    ...state,
    turn: nextTurn,
    reopenedFromTurn: input.turn,
    pendingCalls: state.pendingCalls.map(({ precondition: _sealed, recordChanged: _before, ...call }) =>
      reopening.kind === 'record-changed'
        ? reopening.changedIndexes.has(call.index)
          ? { ...call, recordChanged: true }
          : call
        : { ...call, guard: reopening.guards.get(call.index) ?? call.guard ?? 'none' },
    ),
  };
  await moveRunOn(dependencies, status, input.runId, nextState, {
    turn: nextTurn,
    closeCardBecause: 'reopened',
    endedMeanwhile: 'The run ended while its tools were checked.',
  });
  const tools =
    reopening.kind === 'guard-raised'
      ? reopening.tools
      : [
          ...new Set(
            state.pendingCalls
              .filter((call) => reopening.changedIndexes.has(call.index))
              .map((call) => call.tool),
          ),
        ];
  dependencies.logger.info(
    reopening.kind === 'record-changed'
      ? 'approved writes not applied: a record changed after the card was shown'
      : 'approved writes not applied: a call needs more approval than its card was decided under',
    { runId: input.runId, turn: input.turn, reviewTurn: nextTurn, tools },
  );
  return { runId: input.runId, turn: nextTurn, route: 'review', owner };
}

async function runCall(
  dependencies: ToolStepDependencies,
  resolved: ResolvedCall<RunStateCall>,
  actingUser: NonNullable<Awaited<ReturnType<RunDependencies['users']['getUser']>>>,
  runId: string,
): Promise<{ content: string; isError: boolean }> {
  const { call } = resolved;
  // The card's "will run" and execution follow the same rule, so what an approver was told holds.
  const runnability = describeCallRunnability(resolved);
  if (runnability.kind === 'refused-arguments') {
    return { content: TEXTS.toolInvalidArguments(call.tool, runnability.problem), isError: true };
  }
  if (runnability.kind !== 'runs') return { content: TEXTS.toolUnavailable(call.tool), isError: true };
  const { tool, value } = runnability;
  try {
    const outcome = await tool.execute(value, {
      actingUser,
      runId,
      pages: dependencies.pages,
      ...(call.precondition === undefined ? {} : { precondition: call.precondition }),
    });
    dependencies.metrics.count('ToolCalls', 1, {
      tool: call.tool,
      outcome: outcome.isError ? 'refused' : 'ok',
    });
    return outcome;
  } catch (error) {
    // The exception text stays out of the transcript and the logs: it can carry credentials.
    const errorClass = describeErrorClass(error);
    dependencies.logger.warn('tool failed', { runId, tool: call.tool, errorClass });
    dependencies.metrics.count('ToolCalls', 1, { tool: call.tool, outcome: 'failed' });
    return { content: TEXTS.toolFailed(call.tool, errorClass), isError: true };
  }
}

/** Appends the results as the next user message, clears the pending calls, leaves the inbox. */
export async function saveResults(
  dependencies: Pick<RunDependencies, 'runs' | 'sealer' | 'clock'>,
  status: string,
  input: StepInput,
  state: RunState,
  results: ToolResultBlock[],
): Promise<void> {
  const { reopenedFromTurn: _reviewed, ...rest } = state;
  const nextState: RunState = {
    ...rest,
    transcript: [...state.transcript, { role: 'user', content: results }],
    pendingCalls: [],
  };
  await moveRunOn(dependencies, status, input.runId, nextState, {
    closeCardBecause: 'decided',
    endedMeanwhile: 'The run ended while its tools ran.',
  });
}

/**
 * Seals the turn's next state and puts the run back to running (it leaves the inbox), unless it
 * ended meanwhile (cancelled, expired): then `conflict`. A card the run waited on is closed.
 */
async function moveRunOn(
  dependencies: Pick<RunDependencies, 'runs' | 'sealer' | 'clock'>,
  status: string,
  runId: string,
  nextState: RunState,
  change: { turn?: number; closeCardBecause: CardClosing; endedMeanwhile: string },
): Promise<void> {
  const outcome = await dependencies.runs.updateRun(
    runId,
    {
      status: 'running',
      ...(change.turn === undefined ? {} : { turn: change.turn }),
      updatedAt: dependencies.clock.now().toISOString(),
    },
    {
      sealedState: await sealJson(dependencies.sealer, 'run-state', runId, nextState),
      expectStatus: ['running', 'waiting'],
      removeFields: ['pausedAt', 'expiresAt', 'pendingToolNames'],
    },
  );
  if (outcome.kind === 'condition-failed') throw new CountersignError('conflict', change.endedMeanwhile);
  if (status === 'waiting') await dependencies.runs.closeCard(runId, change.closeCardBecause);
}
