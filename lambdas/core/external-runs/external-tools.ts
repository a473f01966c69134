import * as z from 'zod/mini';
import type { CallGuard } from '../approvals/needs-human-approval.js';
import { TEXTS } from '../texts.js';
import type { RunTools } from '../tools/mcp/run-tools.js';
import type { Tool, ToolEffect, ToolRegistry } from '../tools/tool.js';
import { callerToolName, isExternalToolName } from './external-tool-names.js';

/** The caller checks its own arguments; countersign only needs a JSON object to show and digest. */
const externalArguments = z.record(z.string(), z.unknown());

/**
 * What countersign knows of a tool of an agent that runs elsewhere: its name, any object of
 * arguments, and the effect its caller declared (a write wherever nobody says otherwise: the
 * card's recorded guard is what every gate reads). It never runs here, and it has no record
 * check, so the `record` decision gate refuses it (fail closed: countersign holds no record to
 * check). `undefined` for a name that is not an external tool's.
 *
 * @example
 * createExternalToolStandIn('billing-agent/send_invoice')?.effect; // 'write'
 */
export function createExternalToolStandIn(
  name: string,
  effect: ToolEffect = 'write',
): Tool<Record<string, unknown>> | undefined {
  if (!isExternalToolName(name)) return undefined;
  return {
    name,
    description: TEXTS.externalToolDescription(callerToolName(name)),
    input: externalArguments,
    effect,
    execute: async () => ({ content: TEXTS.externalToolRunsElsewhere, isError: true }),
  };
}

/**
 * The tools of an external run at its pause: each call's tool as its caller declared it, which
 * the submission recorded as the call's guard. A read is confirmed read-only, a write a write;
 * an `unknown` tool is confirmed as nothing, so the pause classifies its calls `unconfirmed`.
 *
 * @example
 * const runTools = externalRunTools(state.pendingCalls, dependencies.tools);
 * classifyCall(call, runTools.confirmedTool(call.tool));
 */
export function externalRunTools(
  calls: ReadonlyArray<{ tool: string; guard?: CallGuard | undefined }>,
  tools: ToolRegistry,
): RunTools {
  const declared = new Map(calls.map((call) => [call.tool, call.guard]));
  return {
    tools,
    mcpToolNames: [],
    confirmedTool: (name) => {
      const guard = declared.get(name);
      if (guard === 'none') return createExternalToolStandIn(name, 'read');
      return guard === 'write' ? createExternalToolStandIn(name, 'write') : undefined;
    },
  };
}
