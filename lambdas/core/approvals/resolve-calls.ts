import '../schema-messages.js';
import { safeParse } from 'zod/mini';
import type { Tool, ToolRegistry } from '../tools/tool.js';
import type { PendingCall } from './pending-call.js';

/** A call's arguments as its tool reads them: parsed once, for every check that needs them. */
export type CallArguments =
  | { kind: 'accepted'; value: unknown }
  /** The tool's schema refuses them; `problem` names the first fields and why (no values). */
  | { kind: 'refused'; problem: string }
  /** No tool of that name is registered: nothing can read them. */
  | { kind: 'no-tool' };

/** A pending call with its tool looked up and its arguments parsed, once per request. */
export interface ResolvedCall<Call extends PendingCall = PendingCall> {
  call: Call;
  tool: Tool | undefined;
  arguments: CallArguments;
}

/**
 * Looks up each call's tool and parses its arguments with the tool's schema, once: the card
 * view, the read gate, the decision gate, the runnability rule and the audit all read the
 * result instead of parsing again.
 *
 * @example
 * const [first] = resolveCalls(card.pendingCalls, tools);
 * if (first?.arguments.kind === 'accepted') await tool.preview(first.arguments.value, …);
 */
export function resolveCalls<Call extends PendingCall>(
  calls: readonly Call[],
  tools: ToolRegistry,
): Array<ResolvedCall<Call>> {
  return calls.map((call) => resolveCall(call, tools.get(call.tool)));
}

/** One call against the tool registered under its name. */
export function resolveCall<Call extends PendingCall>(
  call: Call,
  tool: Tool | undefined,
): ResolvedCall<Call> {
  if (!tool) return { call, tool, arguments: { kind: 'no-tool' } };
  const parsed = safeParse(tool.input, call.arguments);
  return {
    call,
    tool,
    arguments: parsed.success
      ? { kind: 'accepted', value: parsed.data }
      : { kind: 'refused', problem: formatArgumentProblem(parsed.error.issues) },
  };
}

/** How many schema issues a refusal names: enough to fix the call, short enough to read. */
const NAMED_ISSUES = 5;

/**
 * The first issues of a refused call as `path: message`, the wording the model and the card
 * both read. Issue messages name expectations, never the refused values.
 */
export function formatArgumentProblem(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
): string {
  return issues
    .slice(0, NAMED_ISSUES)
    .map((issue) => `${issue.path.map(String).join('.') || 'arguments'}: ${issue.message}`)
    .join('; ');
}
