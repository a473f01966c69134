import type { Tool } from '../tools/tool.js';
import type { ResolvedCall } from './resolve-calls.js';

/** Whether a pending call would run if the turn were approved (with what), and why not. */
export type CallRunnability =
  | { kind: 'runs'; tool: Tool; value: unknown }
  | { kind: 'not-registered' }
  | { kind: 'not-offered' }
  /** `problem` names the first refused fields and why (no values). */
  | { kind: 'refused-arguments'; problem: string };

/**
 * The one rule for "this call will not run" that the card shows, the decision enforces and
 * execute-tools follows: a call to an unregistered or un-offered tool, or with arguments the
 * tool's schema refuses, is answered with an error instead of run.
 *
 * @example
 * classifyCallRunnability(resolveCall({ index: 0, tool: 'nope', arguments: {}, offered: true }, undefined))
 * // { kind: 'not-registered' }
 */
export function classifyCallRunnability({ call, tool, arguments: parsed }: ResolvedCall): CallRunnability {
  if (!tool) return { kind: 'not-registered' };
  if (!call.offered) return { kind: 'not-offered' };
  if (parsed.kind !== 'accepted') {
    return { kind: 'refused-arguments', problem: parsed.kind === 'refused' ? parsed.problem : '' };
  }
  return { kind: 'runs', tool, value: parsed.value };
}

/** True when no call of the card would run: approving it would change nothing (issue #9). */
export function isNothingRunnable(calls: readonly ResolvedCall[]): boolean {
  return calls.every((call) => classifyCallRunnability(call).kind !== 'runs');
}
