import { needsApproval, type Tool } from '../tools/tool.js';
import type { PendingCall } from './pending-call.js';

/**
 * THE rule for whether a call needs a human: it was offered to the model and its tool needs
 * approval (a write, or a tool that asks for it). The pause routes on it, the decision gate
 * lists the tools it covers, and execution refuses such a call without an approval on record.
 *
 * @example
 * needsHumanApproval({ offered: true }, writeTool) // true
 */
export function needsHumanApproval(
  call: Pick<PendingCall, 'offered'>,
  tool: Pick<Tool, 'effect' | 'requiresApproval'> | undefined,
): boolean {
  return call.offered && tool !== undefined && needsApproval(tool);
}
