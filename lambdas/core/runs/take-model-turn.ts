import { classifyCall, needsHumanApproval } from '../approvals/needs-human-approval.js';
import type { RunStateCall } from '../approvals/pending-call.js';
import { CountersignError } from '../errors.js';
import { callModel } from '../generation/call-model.js';
import { nestsDeeperThan } from '../json-depth.js';
import type { ModelReply, ToolCallBlock } from '../model.js';
import type { RunDependencies } from '../run-dependencies.js';
import type { RunRecord } from '../run-record.js';
import { sealJson } from '../sealed-json.js';
import { fitModelSend } from '../skills/fit-model-send.js';
import { TEXTS } from '../texts.js';
import { mcpServerOf } from '../tools/mcp/mcp-tools.js';
import { type RunTools, toolsForRun } from '../tools/mcp/run-tools.js';
import { specifyAllowedTools } from '../tools/tool-specification.js';
import { loadRun, unsealRunState } from './load-run.js';
import type { RunState } from './run-state.js';

export interface ModelTurnInput {
  runId: string;
  turn: number;
}

export type ModelTurnRoute = 'final' | 'tools' | 'approval' | 'continue';

export interface ModelTurnOutput {
  runId: string;
  turn: number;
  route: ModelTurnRoute;
  /**
   * The run's owner (an identifier). No step reads it: an execution started before 0.3 names
   * `$.owner` in its AwaitApproval payload, so the output keeps it while one may still run.
   */
  owner: string;
}

/**
 * The approval card shows every argument of the turn and lives in one DynamoDB item (400 KB):
 * a turn whose arguments exceed this cannot be put before a human, so the run fails instead.
 */
export const MAX_TURN_ARGUMENTS_BYTES = 200_000;
/**
 * Every call of a turn is on its card and an approver reads each one: past this many, a card
 * could no longer be shown within an inbox page (each call adds its excerpt and its preview).
 */
export const MAX_TURN_CALLS = 50;
/**
 * Arguments are any JSON, stored as text wherever they go, but every walk of them (the digest,
 * sealing, the card) recurses: past this depth a turn fails with a readable reason instead of a
 * stack overflow. DynamoDB's own limit (32) no longer applies (issue #20).
 */
export const MAX_TURN_ARGUMENTS_DEPTH = 128;
/** Longer than any tool's name can be (64): a call's name is stored as is on its card. */
export const MAX_TOOL_NAME_CHARACTERS = 200;

export type ModelTurnDependencies = Pick<
  RunDependencies,
  | 'runs'
  | 'sealer'
  | 'configurations'
  | 'tools'
  | 'mcp'
  | 'models'
  | 'clock'
  | 'logger'
  | 'metrics'
  | 'settings'
>;

/**
 * One model turn: send the transcript and the offered tools, record the reply, and say where
 * the run goes next. Only offered tools (allowed by the configuration and registered) count
 * as calls that may run; the rest are answered with an error at execution.
 */
export async function takeModelTurn(
  dependencies: ModelTurnDependencies,
  input: ModelTurnInput,
): Promise<ModelTurnOutput> {
  const run = await loadRun(dependencies, input.runId);
  const { record } = run;
  const configuration = await dependencies.configurations.getConfiguration(record.configurationId);
  if (!configuration)
    throw new CountersignError('configuration', "The run's configuration no longer exists.");

  if (record.turn > input.turn) {
    // A retried step whose first attempt already recorded the reply: answer from the state.
    const state = await unsealRunState(dependencies, run);
    return {
      runId: input.runId,
      turn: record.turn,
      route: routeFor(state, await toolsForRun(dependencies, configuration, 'execute')),
      owner: record.owner,
    };
  }
  if (record.status !== 'running') {
    throw new CountersignError('conflict', `The run is ${record.status}, not running.`);
  }
  const maxTurns = Math.min(configuration.options.maxTurns, dependencies.settings.maxTurns);
  if (record.turn >= maxTurns) throw new CountersignError('model-failed', TEXTS.maxTurnsReached(maxTurns));
  if (record.turn - record.executionStartTurn >= configuration.options.turnsPerExecution) {
    return { runId: input.runId, turn: record.turn, route: 'continue', owner: record.owner };
  }

  const state = await unsealRunState(dependencies, run);
  if (state.pendingCalls.length > 0) {
    // This turn's reply is recorded but its calls never ran (a run driven again after a
    // crash): route it again rather than ask the model twice.
    return {
      runId: input.runId,
      turn: record.turn,
      route: routeFor(state, await toolsForRun(dependencies, configuration, 'execute')),
      owner: record.owner,
    };
  }
  // The configuration's MCP servers are listed now: their tools are offered as they are today.
  const runTools = await toolsForRun(dependencies, configuration, 'offer');
  const { tools, mcpToolNames } = runTools;
  const mcpServerNames = new Set((configuration.mcpServers ?? []).map((server) => server.name));
  const offered = specifyAllowedTools(tools, [
    // An MCP tool is offered because its server lists it, never because a name was allowed.
    ...configuration.allowedTools.filter((name) => !mcpServerNames.has(mcpServerOf(name) ?? '')),
    ...mcpToolNames,
  ]);
  const offeredNames = new Set(offered.map((tool) => tool.name));
  const model = dependencies.models.resolve(configuration.provider);
  // The context window bounds the real send (skills block counted); the sealed transcript stays whole.
  const whole = {
    model: configuration.model,
    ...(state.system ? { system: state.system } : {}),
    messages: state.transcript,
    tools: offered,
    maxTokens: configuration.options.maxTokens,
  };
  const send = await fitModelSend(dependencies, {
    provider: configuration.provider,
    model,
    request: whole,
    logFields: { runId: input.runId },
  });
  const reply = await callModel(dependencies, {
    configurationId: configuration.configurationId,
    provider: configuration.provider,
    model,
    request: { ...whole, messages: send.messages, temperature: configuration.options.temperature },
    logFields: { runId: input.runId, turn: record.turn },
  });
  const calls = reply.content.filter((block): block is ToolCallBlock => block.type === 'tool_call');
  const pendingCalls: RunStateCall[] = calls.map((call, index) => {
    const offered = offeredNames.has(call.name);
    return {
      index,
      callId: call.callId || `call-${record.turn}-${index}`,
      tool: call.name,
      arguments: call.arguments ?? null,
      offered,
      // Recorded with the calls: the pause never classifies them less guarded than this.
      guard: classifyCall({ offered }, runTools.confirmedTool(call.name)),
    };
  });
  if (pendingCalls.length > MAX_TURN_CALLS) {
    throw new CountersignError('model-failed', TEXTS.tooManyCalls(MAX_TURN_CALLS));
  }
  if (pendingCalls.some((call) => call.tool.length > MAX_TOOL_NAME_CHARACTERS || !call.tool.isWellFormed())) {
    throw new CountersignError('model-failed', TEXTS.callNameUnusable(MAX_TOOL_NAME_CHARACTERS));
  }
  if (pendingCalls.some((call) => nestsDeeperThan(call.arguments, MAX_TURN_ARGUMENTS_DEPTH))) {
    throw new CountersignError('model-failed', TEXTS.callsTooDeep(MAX_TURN_ARGUMENTS_DEPTH));
  }
  if (
    new TextEncoder().encode(JSON.stringify(pendingCalls.map((call) => call.arguments))).byteLength >
    MAX_TURN_ARGUMENTS_BYTES
  ) {
    throw new CountersignError('model-failed', TEXTS.callsTooLarge(MAX_TURN_ARGUMENTS_BYTES));
  }
  const content = reply.content.map((block) =>
    block.type === 'tool_call'
      ? { ...block, callId: pendingCalls[calls.indexOf(block)]?.callId ?? block.callId }
      : block,
  );
  if (content.length === 0) throw new CountersignError('model-failed', 'The model returned an empty reply.');

  const nextTurn = record.turn + 1;
  const finalText =
    calls.length === 0
      ? content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')
      : undefined;
  const nextState: RunState = {
    ...state,
    turn: nextTurn,
    transcript: [...state.transcript, { role: 'assistant', content }],
    pendingCalls,
    ...(finalText === undefined ? {} : { finalText }),
  };
  const outcome = await dependencies.runs.updateRun(
    input.runId,
    {
      turn: nextTurn,
      usage: addUsage(record.usage, reply),
      updatedAt: dependencies.clock.now().toISOString(),
    },
    {
      sealedState: await sealJson(dependencies.sealer, 'run-state', input.runId, nextState),
      expectStatus: ['running'],
    },
  );
  if (outcome.kind === 'condition-failed')
    throw new CountersignError('conflict', 'The run changed during the model turn.');
  const route = routeFor(nextState, runTools);
  dependencies.logger.info('model turn recorded', {
    runId: input.runId,
    turn: nextTurn,
    route,
    calls: pendingCalls.length,
  });
  return { runId: input.runId, turn: nextTurn, route, owner: record.owner };
}

/** The run's token count with this turn's reply added (a reply without usage counts as a call). */
function addUsage(usage: RunRecord['usage'], reply: ModelReply): NonNullable<RunRecord['usage']> {
  return {
    inputTokens: (usage?.inputTokens ?? 0) + (reply.usage?.inputTokens ?? 0),
    outputTokens: (usage?.outputTokens ?? 0) + (reply.usage?.outputTokens ?? 0),
    modelCalls: (usage?.modelCalls ?? 0) + 1,
  };
}

/** Where recorded calls go: to a human when any of them needs one, as classified against `runTools`. */
function routeFor(state: RunState, runTools: RunTools): ModelTurnRoute {
  if (state.pendingCalls.length === 0) return 'final';
  const waitsForHuman = state.pendingCalls.some((call) =>
    needsHumanApproval(classifyCall(call, runTools.confirmedTool(call.tool))),
  );
  return waitsForHuman ? 'approval' : 'tools';
}
