import type { ResolvedCall } from './resolve-calls.js';

/** Whether a pending call would run if the turn were approved, and why not. */
export type CallRunnability =
  | { kind: 'runs' }
  | { kind: 'not-registered' }
  | { kind: 'not-offered' }
  | { kind: 'refused-arguments' };

/**
 * The one rule for "this call will not run" that the card shows and the decision enforces:
 * execute-tools answers a call to an unregistered or un-offered tool, or with arguments the
 * tool's schema refuses, with an error instead of running it.
 *
 * @example
 * describeCallRunnability(resolveCall({ index: 0, tool: 'nope', arguments: {}, offered: true }, undefined))
 * // { kind: 'not-registered' }
 */
export function describeCallRunnability(resolved: ResolvedCall): CallRunnability {
  if (!resolved.tool) return { kind: 'not-registered' };
  if (!resolved.call.offered) return { kind: 'not-offered' };
  if (resolved.arguments.kind !== 'accepted') return { kind: 'refused-arguments' };
  return { kind: 'runs' };
}

/** True when no call of the card would run: approving it would change nothing (issue #9). */
export function isNothingRunnable(calls: readonly ResolvedCall[]): boolean {
  return calls.every((call) => describeCallRunnability(call).kind !== 'runs');
}
