import * as z from 'zod/mini';
import { needsApproval, type Tool } from '../tools/tool.js';

/**
 * How a pending call is guarded, as a step classified it:
 * - `none`: it runs without a human (a read-only tool), or it will not run at all (not offered);
 * - `approval`: a read whose tool asks for approval;
 * - `write`: a write;
 * - `unconfirmed`: its effect could not be established (its server could not be listed, the tool
 *   is not listed or registered now, or it claims to be less guarded than an earlier step found
 *   it). It needs approval under every gate exactly as a write of that tool does.
 */
export const CALL_GUARDS = ['none', 'approval', 'write', 'unconfirmed'] as const;
export type CallGuard = (typeof CALL_GUARDS)[number];
export const callGuardSchema = z.enum(CALL_GUARDS);

/** How strongly each guard binds; `unconfirmed` binds like a write, the strictest there is. */
const STRICTNESS: Readonly<Record<CallGuard, number>> = { none: 0, approval: 1, write: 2, unconfirmed: 2 };

/**
 * THE rule for how a call is guarded (docs/approvers.md, docs/mcp.md). `tool` is the call's tool
 * as this step established it, `undefined` when it could not (never a stand-in). A call that was
 * not offered will not run. `earlier` is what an earlier step of the same calls found (the model
 * turn, a pause): a call is never classified less guarded than that; a tool that claims to be is
 * `unconfirmed`, because nobody can say which claim holds.
 *
 * @example
 * classifyCall({ offered: true }, writeTool) // 'write'
 * classifyCall({ offered: true, guard: 'write' }, readOnlyTool) // 'unconfirmed'
 * classifyCall({ offered: true }, undefined) // 'unconfirmed'
 */
export function classifyCall(
  call: { offered: boolean; guard?: CallGuard | undefined },
  tool: Pick<Tool, 'effect' | 'requiresApproval'> | undefined,
): CallGuard {
  if (!call.offered) return 'none';
  const now = classifyTool(tool);
  const earlier = call.guard ?? 'none';
  return STRICTNESS[now] < STRICTNESS[earlier] ? 'unconfirmed' : now;
}

/**
 * How a call is guarded where it is about to run: its tool as established now, `undefined` for
 * one that will not run (not offered, or a tool whose definition is not established: such a call
 * is answered with an error and reaches nothing). No earlier classification enters: execution
 * compares this with what the approval covered ({@link isGuardedMoreThan}).
 */
export function classifyCallForExecution(
  call: { offered: boolean },
  tool: Pick<Tool, 'effect' | 'requiresApproval'> | undefined,
): CallGuard {
  return call.offered && tool !== undefined ? classifyTool(tool) : 'none';
}

/** Whether a call so guarded waits for a human: every guard but `none`. */
export function needsHumanApproval(guard: CallGuard): boolean {
  return guard !== 'none';
}

/** Whether `guard` asks for more than `covered` did: approval where none was needed. */
export function isGuardedMoreThan(guard: CallGuard, covered: CallGuard): boolean {
  return needsHumanApproval(guard) && !needsHumanApproval(covered);
}

/** The stricter of two guards (`unconfirmed` over `write`, so the card keeps saying why). */
export function stricterGuard(left: CallGuard, right: CallGuard): CallGuard {
  if (STRICTNESS[left] !== STRICTNESS[right]) return STRICTNESS[left] > STRICTNESS[right] ? left : right;
  return left === 'unconfirmed' ? left : right;
}

function classifyTool(tool: Pick<Tool, 'effect' | 'requiresApproval'> | undefined): CallGuard {
  if (tool === undefined) return 'unconfirmed';
  if (tool.effect === 'write') return 'write';
  return needsApproval(tool) ? 'approval' : 'none';
}
