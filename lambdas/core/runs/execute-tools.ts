import { checkApprovalCoverage } from '../approvals/approval-coverage.js';
import type { EditOnRecord } from '../approvals/decision-record.js';
import {
  type CallGuard,
  classifyCallForExecution,
  needsHumanApproval,
} from '../approvals/needs-human-approval.js';
import type { RunStateCall } from '../approvals/pending-call.js';
import { type ResolvedCall, resolveCalls } from '../approvals/resolve-calls.js';
import type { CardClosing } from '../approvals/stored-card.js';
import { CountersignError } from '../errors.js';
import type { ToolResultBlock } from '../model.js';
import type { RunDependencies, ToolStepDependencies } from '../run-dependencies.js';
import { TERMINAL_STATUSES } from '../run-record.js';
import { sealJson } from '../sealed-json.js';
import { TEXTS } from '../texts.js';
import { toolsForPendingCalls } from '../tools/mcp/run-tools.js';
import type { ToolExecutionContext } from '../tools/tool.js';
import { type CallLedger, openCallLedger, readRecordedResult, runLedgeredCall } from './call-ledger.js';
import { editedCallOutcome, refusedCallOutcome } from './call-outcomes.js';
import { type CallResult, deriveIdempotencyKey } from './call-record.js';
import { loadRun, unsealRunState } from './load-run.js';
import { checkPreconditions } from './record-preconditions.js';
import { type CompletedCall, RUN_STATE_SCHEMA_VERSION, type RunState } from './run-state.js';
import { runToolCall } from './run-tool-call.js';
import { readTurnDecision } from './turn-decision.js';

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
  /**
   * The run's owner (an identifier). No step reads it: an execution started before 0.3 names
   * `$.owner` in its AwaitApproval payload, so the output keeps it while one may still run.
   */
  owner: string;
  /** An external run's edit going back to its card: the state after the wait chooses by it. */
  kind?: 'external';
}

/**
 * Runs the pending calls of a turn under the run's acting user and hands the results to the
 * next model turn. A write runs only when an approval of exactly this turn's digest is on
 * record, taken under a classification at least as strict as the one it runs under: a write
 * whose approval cannot be shown does not execute, and one that became more guarded since its
 * card waits on a fresh card.
 *
 * Idempotent under retries: each call that needs approval runs under the call ledger
 * (call-ledger.ts), so a retried step reuses the result of a call that ran and never runs it
 * twice; read-only calls simply run again. Every tool gets the call's idempotency key.
 */
export async function executeTools(
  stepDependencies: ToolStepDependencies,
  input: StepInput,
): Promise<ExecuteToolsOutput> {
  let dependencies = stepDependencies;
  const run = await loadRun(dependencies, input.runId);
  const { owner } = run.record;
  const kind = run.record.kind === 'external' ? ({ kind: 'external' } as const) : {};
  // A cancelled (or otherwise ended) run writes nothing more, even if its execution still ran.
  if (TERMINAL_STATUSES.has(run.record.status)) {
    throw new CountersignError('conflict', `The run has already ended (${run.record.status}).`);
  }
  if (run.record.turn === input.turn + 1) {
    // A retried step whose first attempt reopened the turn for review: go to that review.
    const reopened = await unsealRunState(dependencies, run);
    if (reopened.reopenedFromTurn === input.turn && reopened.pendingCalls.length > 0) {
      return { runId: input.runId, turn: run.record.turn, route: 'review', owner, ...kind };
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
  // The decision on record, read once: an edit goes on a fresh card, a per-call decision's
  // rejected calls do not run (the model is told each was denied).
  const decision = await readTurnDecision(dependencies, input.runId, input.turn);
  if (decision.edits.length > 0) {
    const reviewed = await reopenForReview(dependencies, run.record.status, input, state, owner, {
      reopening: { kind: 'edited', edits: decision.edits, editedBy: decision.record?.decidedBy ?? '' },
      completed: [],
    });
    return { ...reviewed, ...kind };
  }
  // An external run comes here only with an edit (RecordExternalDecision routes it): its agent runs its calls.
  if (run.record.kind === 'external') {
    throw new CountersignError('conflict', 'An external run’s calls run in its agent, never here.');
  }
  const { refused } = decision;
  // The calls that need approval as they are about to run: those the ledger keeps at most once.
  const approved = new Set(
    state.pendingCalls
      .filter((call) => !refused.has(call.index))
      .filter((call) => needsHumanApproval(classifyCallForExecution(call, runTools.confirmedTool(call.tool))))
      .map((call) => call.index),
  );
  const ledger = await openCallLedger(dependencies, {
    runId: input.runId,
    turn: input.turn,
    attemptId: dependencies.newId(),
  });
  const recorded = await recordedResults(dependencies, ledger);
  const review = (reopening: Reopening, results: ReadonlyMap<number, CallResult>) =>
    reopenForReview(dependencies, run.record.status, input, state, owner, {
      reopening,
      completed: completedOf(state, results),
    });
  const coverage = await checkApprovalCoverage(dependencies, {
    ...input,
    calls: state.pendingCalls,
    runTools,
    decision: decision.record,
    notRun: new Set(refused.keys()),
  });
  if (coverage.kind === 'stricter') {
    return review({ kind: 'guard-raised', guards: coverage.guards, tools: coverage.stricterTools }, recorded);
  }

  const actingUser = await dependencies.users.getUser(run.record.owner);
  if (!actingUser) throw new CountersignError('forbidden', 'The user who started the run no longer exists.');
  const context = { actingUser, runId: input.runId, pages: dependencies.pages };
  // Each call's tool and arguments, parsed once for the preconditions and the run.
  const resolved = resolveCalls(state.pendingCalls, dependencies.tools);
  // A call an earlier attempt touched decides with its own key at the write (its own write may
  // be what changed its record); the others are checked before any call runs, as a card promised.
  const check = await checkPreconditions(
    resolved.filter(({ call }) => !ledger.records.has(call.index) && !refused.has(call.index)),
    { actingUser, context, logger: dependencies.logger },
  );
  const changedBefore = new Set(
    [...recorded].filter(([, result]) => result.recordChanged === true).map(([index]) => index),
  );
  if (check.kind === 'changed' || changedBefore.size > 0) {
    const changedIndexes = new Set([
      ...changedBefore,
      ...(check.kind === 'changed' ? check.changedIndexes : []),
    ]);
    return review({ kind: 'record-changed', changedIndexes }, recorded);
  }
  const results = new Map<number, CallResult>();
  for (const resolvedCall of resolved) {
    const { call } = resolvedCall;
    const earlier = recorded.get(call.index);
    const unreadable = check.unreadable.get(call.index);
    const rejection = refused.get(call.index);
    const result: CallResult =
      earlier ??
      (rejection !== undefined
        ? refusedCallOutcome(call.tool, rejection.reason, run.record.policy.revealRejectionReason)
        : unreadable !== undefined
          ? { content: TEXTS.toolFailed(call.tool, unreadable), isError: true }
          : await runCall(dependencies, ledger, approved.has(call.index), resolvedCall, {
              ...context,
              idempotencyKey: deriveIdempotencyKey(input.runId, input.turn, call.index),
              ...(call.precondition === undefined ? {} : { precondition: call.precondition }),
            }));
    if (result.recordChanged === true) {
      // The conditional write lost to an edit that landed after the check: asked again, as above.
      return review(
        { kind: 'record-changed', changedIndexes: new Set([call.index]) },
        new Map([...recorded, ...results]),
      );
    }
    results.set(call.index, result);
  }
  await saveResults(
    dependencies,
    run.record.status,
    input,
    state,
    state.pendingCalls.map((call) => toolResultOf(call, results.get(call.index))),
  );
  return done;
}

/** One call: one that needs approval under the call ledger, a read simply (running it again is harmless). */
async function runCall(
  dependencies: ToolStepDependencies,
  ledger: CallLedger,
  approved: boolean,
  resolved: ResolvedCall<RunStateCall>,
  context: ToolExecutionContext,
): Promise<CallResult> {
  const { call } = resolved;
  if (!approved) {
    const attempt = await runToolCall(dependencies, resolved, context);
    return attempt.kind === 'ran'
      ? attempt.result
      : { content: TEXTS.toolFailed(call.tool, attempt.errorClass), isError: true };
  }
  const result = await runLedgeredCall(dependencies, ledger, {
    index: call.index,
    tool: call.tool,
    idempotent: resolved.tool?.idempotent === true,
    run: () => runToolCall(dependencies, resolved, context),
  });
  // Only a call whose card sealed a precondition goes back for review when its record changed.
  if (result.recordChanged === true && call.precondition === undefined) {
    const { recordChanged: _ignored, ...plain } = result;
    return plain;
  }
  return result;
}

/** The results the ledger already holds, by call index: calls an earlier attempt ran. */
async function recordedResults(
  dependencies: Pick<RunDependencies, 'sealer'>,
  ledger: CallLedger,
): Promise<Map<number, CallResult>> {
  const results = new Map<number, CallResult>();
  for (const index of ledger.records.keys()) {
    const result = await readRecordedResult(dependencies, ledger, index);
    if (result !== undefined) results.set(index, result);
  }
  return results;
}

/** The calls of the turn whose results stand (they ran and applied, or failed for good). */
function completedOf(state: RunState, results: ReadonlyMap<number, CallResult>): CompletedCall[] {
  return state.pendingCalls.flatMap((call) => {
    const result = results.get(call.index);
    if (result === undefined || result.recordChanged === true) return [];
    return [{ index: call.index, callId: call.callId, content: result.content, isError: result.isError }];
  });
}

function toolResultOf(call: RunStateCall, result: CallResult | undefined): ToolResultBlock {
  const outcome = {
    content: result?.content ?? TEXTS.toolUnavailable(call.tool),
    isError: result?.isError ?? true,
  };
  // A call that ran with an approver's edit: the model's history says so, and with what.
  const told = call.edited
    ? editedCallOutcome(outcome, { editedBy: call.edited.by, arguments: call.arguments })
    : outcome;
  return { type: 'tool_result', callId: call.callId, ...told };
}

/** Why a turn's approval is not applied and its calls wait on a fresh card. */
type Reopening =
  /** A record changed after the card was shown (a tool's precondition). */
  | { kind: 'record-changed'; changedIndexes: ReadonlySet<number> }
  /** A call is guarded more now than when its card was decided; `guards` is where the next pause starts. */
  | { kind: 'guard-raised'; guards: ReadonlyMap<number, CallGuard>; tools: string[] }
  /** An approver edited calls: a new proposal, put on a fresh card for approval. */
  | { kind: 'edited'; edits: readonly EditOnRecord[]; editedBy: string };

/**
 * The turn's approval cannot be applied: what did not run is not applied, and those calls move
 * to the next turn number, where AwaitApproval seals fresh versions, previews, guards and
 * digest; calls that already ran keep their results (`completedCalls`) for the model to get with
 * the others'. The approval on record stays in the audit; it cannot carry over (a decision names
 * its turn and digest). The transcript gets no result yet, so the model is never told a write
 * happened that did not. A re-review takes a turn, so a record edited in a loop cannot keep a
 * run paused past maxTurns.
 */
async function reopenForReview(
  dependencies: Pick<RunDependencies, 'runs' | 'sealer' | 'clock' | 'logger'>,
  status: string,
  input: StepInput,
  state: RunState,
  owner: string,
  change: { reopening: Reopening; completed: readonly CompletedCall[] },
): Promise<ExecuteToolsOutput> {
  const { reopening } = change;
  const nextTurn = input.turn + 1;
  const completedIndexes = new Set(change.completed.map((call) => call.index));
  const completedCalls = [...(state.completedCalls ?? []), ...change.completed];
  const nextState: RunState = {
    ...state,
    turn: nextTurn,
    reopenedFromTurn: input.turn,
    // A card numbers its calls from 0: those left are renumbered (their call ids keep their order).
    pendingCalls: state.pendingCalls
      .filter((call) => !completedIndexes.has(call.index))
      .map(({ precondition: _sealed, recordChanged: _before, ...call }, position) => ({
        ...reopenedCall(call, reopening),
        index: position,
      })),
    ...(completedCalls.length > 0 ? { completedCalls } : {}),
  };
  await moveRunOn(dependencies, status, input.runId, nextState, {
    turn: nextTurn,
    closeCardBecause: 'reopened',
    endedMeanwhile: 'The run ended while its tools were checked.',
  });
  const touched = (indexes: ReadonlySet<number>) => [
    ...new Set(state.pendingCalls.filter((call) => indexes.has(call.index)).map((call) => call.tool)),
  ];
  const tools =
    reopening.kind === 'guard-raised'
      ? reopening.tools
      : reopening.kind === 'edited'
        ? [...new Set(reopening.edits.map((edit) => edit.tool))]
        : touched(reopening.changedIndexes);
  dependencies.logger.info(
    reopening.kind === 'record-changed'
      ? 'approved writes not applied: a record changed after the card was shown'
      : reopening.kind === 'edited'
        ? 'calls edited: the edit waits on a fresh card'
        : 'approved writes not applied: a call needs more approval than its card was decided under',
    { runId: input.runId, turn: input.turn, reviewTurn: nextTurn, applied: completedIndexes.size, tools },
  );
  return { runId: input.runId, turn: nextTurn, route: 'review', owner };
}

/** A call as it goes on the fresh card: marked changed, more guarded, or with an approver's edit. */
function reopenedCall(call: RunStateCall, reopening: Reopening): RunStateCall {
  switch (reopening.kind) {
    case 'record-changed':
      return reopening.changedIndexes.has(call.index) ? { ...call, recordChanged: true } : call;
    case 'guard-raised':
      return { ...call, guard: reopening.guards.get(call.index) ?? call.guard ?? 'none' };
    case 'edited': {
      const edit = reopening.edits.find((each) => each.index === call.index && each.tool === call.tool);
      if (edit === undefined) return call;
      // The model's own arguments stay what an edit of an edit is compared with.
      const originalArguments = call.edited ? call.edited.originalArguments : call.arguments;
      return { ...call, arguments: edit.arguments, edited: { by: reopening.editedBy, originalArguments } };
    }
  }
}

/**
 * Appends the results as the next user message (with those of calls that ran before a review, in
 * the order the model proposed them), clears the pending calls, leaves the inbox.
 */
export async function saveResults(
  dependencies: Pick<RunDependencies, 'runs' | 'sealer' | 'clock'>,
  status: string,
  input: StepInput,
  state: RunState,
  results: ToolResultBlock[],
): Promise<void> {
  const { reopenedFromTurn: _reviewed, completedCalls = [], ...rest } = state;
  // In the order the model proposed the calls (a reviewed turn renumbered the ones it kept).
  const proposal = state.transcript.findLast((message) => message.role === 'assistant');
  const positions = new Map(
    (proposal?.content ?? []).flatMap(
      (block, position): Array<[string, number]> =>
        block.type === 'tool_call' ? [[block.callId, position]] : [],
    ),
  );
  const earlier = completedCalls.map(
    (call): ToolResultBlock => ({
      type: 'tool_result',
      callId: call.callId,
      content: call.content,
      isError: call.isError,
    }),
  );
  const ordered = [...earlier, ...results].sort(
    (left, right) => (positions.get(left.callId) ?? 0) - (positions.get(right.callId) ?? 0),
  );
  const nextState: RunState = {
    ...rest,
    transcript: [...state.transcript, { role: 'user', content: ordered }],
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
      // Written as this version: a reopened turn's state may carry `completedCalls`.
      sealedState: await sealJson(dependencies.sealer, 'run-state', runId, {
        ...nextState,
        schemaVersion: RUN_STATE_SCHEMA_VERSION,
      }),
      expectStatus: ['running', 'waiting'],
      removeFields: ['pausedAt', 'expiresAt', 'pendingToolNames'],
    },
  );
  if (outcome.kind === 'condition-failed') throw new CountersignError('conflict', change.endedMeanwhile);
  if (status === 'waiting') await dependencies.runs.closeCard(runId, change.closeCardBecause);
}
