import '../schema-messages.js';
import { safeParse } from 'zod/mini';
import { CountersignError, describeErrorClass } from '../errors.js';
import type { ToolResultBlock } from '../model.js';
import { TEXTS } from '../texts.js';
import { needsApproval } from '../tools/tool.js';
import { loadRun, unsealRunState } from './load-run.js';
import type { RunDependencies } from './run-dependencies.js';
import { TERMINAL_STATUSES } from './run-record.js';
import type { PendingCall, RunState } from './run-state.js';
import { sealJson } from './sealed-json.js';
import { computeTurnDigest } from './turn-digest.js';

export interface StepInput {
  runId: string;
  turn: number;
}

type ExecuteDependencies = Pick<
  RunDependencies,
  'runs' | 'sealer' | 'users' | 'pages' | 'tools' | 'clock' | 'logger' | 'metrics'
>;

/**
 * Runs the pending calls of a turn under the run's acting user and hands the results to the
 * next model turn. A write runs only when an approval of exactly this turn's digest is on
 * record: a write whose approval cannot be shown does not execute.
 */
export async function executeTools(dependencies: ExecuteDependencies, input: StepInput): Promise<StepInput> {
  const run = await loadRun(dependencies, input.runId);
  // A cancelled (or otherwise ended) run writes nothing more, even if its execution still ran.
  if (TERMINAL_STATUSES.has(run.record.status)) {
    throw new CountersignError('conflict', `The run has already ended (${run.record.status}).`);
  }
  if (run.record.turn !== input.turn) {
    throw new CountersignError('conflict', `The run is at turn ${run.record.turn}, not ${input.turn}.`);
  }
  const state = await unsealRunState(dependencies, run);
  if (state.pendingCalls.length === 0) return input; // a retried step whose results are recorded
  const guarded = state.pendingCalls.some((call) => isGuarded(dependencies, call));
  if (guarded) await requireApproval(dependencies, input, state);

  const actingUser = await dependencies.users.getUser(run.record.owner);
  if (!actingUser) throw new CountersignError('forbidden', 'The user who started the run no longer exists.');
  const results: ToolResultBlock[] = [];
  for (const call of state.pendingCalls) {
    results.push({
      type: 'tool_result',
      callId: call.callId,
      ...(await runCall(dependencies, call, actingUser, input.runId)),
    });
  }
  await saveResults(dependencies, run.record.status, input, state, results);
  return input;
}

function isGuarded(dependencies: Pick<RunDependencies, 'tools'>, call: PendingCall): boolean {
  const tool = dependencies.tools.get(call.tool);
  return call.offered && tool !== undefined && needsApproval(tool);
}

async function requireApproval(
  dependencies: Pick<RunDependencies, 'runs'>,
  input: StepInput,
  state: RunState,
): Promise<void> {
  const decision = await dependencies.runs.getDecision(input.runId, input.turn);
  const digest = computeTurnDigest(input.runId, input.turn, state.pendingCalls);
  if (decision?.decision !== 'approve' || decision.digest !== digest) {
    throw new CountersignError(
      'forbidden',
      'No approval of this turn is on record; its writes were not executed.',
    );
  }
}

async function runCall(
  dependencies: ExecuteDependencies,
  call: PendingCall,
  actingUser: NonNullable<Awaited<ReturnType<RunDependencies['users']['getUser']>>>,
  runId: string,
): Promise<{ content: string; isError: boolean }> {
  const tool = dependencies.tools.get(call.tool);
  if (!call.offered || !tool) return { content: TEXTS.toolUnavailable(call.tool), isError: true };
  const parsed = safeParse(tool.input, call.arguments);
  if (!parsed.success) {
    const problem = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`)
      .join('; ');
    return { content: TEXTS.toolInvalidArguments(call.tool, problem), isError: true };
  }
  try {
    const outcome = await tool.execute(parsed.data, { actingUser, runId, pages: dependencies.pages });
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
  const nextState: RunState = {
    ...state,
    transcript: [...state.transcript, { role: 'user', content: results }],
    pendingCalls: [],
  };
  const now = dependencies.clock.now().toISOString();
  const outcome = await dependencies.runs.updateRun(
    input.runId,
    { status: 'running', updatedAt: now },
    {
      sealedState: await sealJson(dependencies.sealer, 'run-state', input.runId, nextState),
      expectStatus: ['running', 'waiting'],
      removeFields: ['pausedAt', 'expiresAt', 'pendingToolNames'],
    },
  );
  if (outcome.kind === 'condition-failed')
    throw new CountersignError('conflict', 'The run ended while its tools ran.');
  if (status === 'waiting') await dependencies.runs.closeCard(input.runId);
}
