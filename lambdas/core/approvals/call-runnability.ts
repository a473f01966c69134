import { safeParse } from 'zod/mini';
import type { ToolRegistry } from '../tools/tool.js';
import type { CardCall } from './approval-card.js';

/** Whether a pending call would run if the turn were approved, and why not. */
export type CallRunnability =
  | { kind: 'runs' }
  | { kind: 'not-registered' }
  | { kind: 'not-offered' }
  | { kind: 'refused-arguments' };

/**
 * The one rule for "this call will not run" that the card shows and the decision enforces:
 * execute-tools answers a call to an unregistered or un-offered tool, or with arguments the
 * tool's schema refuses, with an error instead of running it. A card sealed before `offered`
 * was recorded counts its calls as offered.
 *
 * @example
 * describeCallRunnability({ index: 0, tool: 'nope', arguments: {} }, tools) // { kind: 'not-registered' }
 */
export function describeCallRunnability(call: CardCall, tools: ToolRegistry): CallRunnability {
  const tool = tools.get(call.tool);
  if (!tool) return { kind: 'not-registered' };
  if (call.offered === false) return { kind: 'not-offered' };
  if (!safeParse(tool.input, call.arguments).success) return { kind: 'refused-arguments' };
  return { kind: 'runs' };
}

/** True when no call of the card would run: approving it would change nothing (issue #9). */
export function isNothingRunnable(calls: readonly CardCall[], tools: ToolRegistry): boolean {
  return calls.every((call) => describeCallRunnability(call, tools).kind !== 'runs');
}
