import { nameErrorClass } from '../errors.js';
import { allowsTool } from '../external-runs/external-tool-names.js';
import { isAdmin, type UserProfile } from '../identity.js';
import type { PageStore } from '../pages.js';
import { applyPolicyFloor, type PolicyFloor, type TurnPolicy } from '../policy/policy-floor.js';
import type { Logger } from '../ports.js';
import { TEXTS } from '../texts.js';
import { needsHumanApproval } from './needs-human-approval.js';
import type { ResolvedCall } from './resolve-calls.js';
import { guardOnCard, type StoredCard } from './stored-card.js';

/** Whether a person may approve a turn, and when not, which gate refused and why. */
export type ApproveGateOutcome =
  | { kind: 'allowed' }
  | { kind: 'refused'; gate: ApproveGateName; message: string };

/** Which part of the decision gate refused (the `gate` dimension of `GateRefusals`). */
export const APPROVE_GATES = ['tool', 'four-eyes', 'own-edit', 'record'] as const;
export type ApproveGateName = (typeof APPROVE_GATES)[number];

/**
 * The policy a waiting turn is decided under: the card's own (the configuration's, raised to
 * the floor when the run paused) raised again to today's floor, so tightening the floor also
 * covers cards already waiting. A card from before k-of-n reads as 1 approval, `tool` gate.
 */
export function effectiveTurnPolicy(card: StoredCard, floor: PolicyFloor | undefined): TurnPolicy {
  return applyPolicyFloor(card, floor, card.writeToolNames);
}

/**
 * The decision gate of an approval (a reject passes no gate: anyone who may see the card may
 * stop the write). In order: tool-level authority (ADR-133) over every tool whose calls need
 * approval on this card (writes, reads that ask, tools whose effect could not be confirmed:
 * `writeToolNames`), four-eyes, and with the `record` gate the record check of each such call,
 * so nobody releases a write to a record they may not see. The record check fails closed: a
 * tool that is gone, offers no check, cannot parse the arguments or throws refuses.
 */
export async function evaluateApproveGate(input: {
  principal: UserProfile;
  card: StoredCard;
  policy: TurnPolicy;
  /** Only called for the `record` gate or an edited card: the unsealed card's calls, resolved once. */
  approvalCalls: () => Promise<readonly ResolvedCall[]>;
  /** The page store the record checks read (the read gate's cached one is fine for display). */
  pages: PageStore;
  logger: Logger;
  /**
   * Per-call decisions: the calls this approval approves. Only they are gated (an approver may
   * approve the calls they hold authority for and reject the others). A card put before call
   * guards were recorded is gated whole. @default every call of the card
   */
  approvedIndexes?: ReadonlySet<number>;
}): Promise<ApproveGateOutcome> {
  const { principal, card, policy } = input;
  const approved = (call: { index: number }) => input.approvedIndexes?.has(call.index) ?? true;
  const gatedTools = gatedToolsOf(card, input.approvedIndexes);
  if (!isAdmin(principal)) {
    const refused = gatedTools.find((tool) => !allowsTool(principal.toolAccess, tool));
    if (refused) return { kind: 'refused', gate: 'tool', message: TEXTS.gateToolRefused(refused) };
  }
  if (policy.fourEyes && card.owner === principal.userId) {
    return { kind: 'refused', gate: 'four-eyes', message: TEXTS.gateFourEyes };
  }
  // An edit is a proposal: where four-eyes or k-of-n applies, someone other than its editor approves it.
  // A card names one editor; a card edited twice may hold calls of several, read from the calls.
  if ((policy.fourEyes || policy.requiredApprovals > 1) && card.editedBy !== undefined) {
    const editors = new Set(
      card.editedBy === principal.userId
        ? [principal.userId]
        : (await input.approvalCalls()).flatMap(({ call }) =>
            approved(call) && call.edited ? [call.edited.by] : [],
          ),
    );
    if (editors.has(principal.userId)) {
      return { kind: 'refused', gate: 'own-edit', message: TEXTS.gateOwnEdit };
    }
  }
  if (policy.decisionGate !== 'record') return { kind: 'allowed' };
  const writeCalls = (await input.approvalCalls()).filter(
    (resolved) => gatedTools.includes(resolved.call.tool) && approved(resolved.call),
  );
  const answers = await Promise.all(
    writeCalls.map(async (resolved) => ({
      tool: resolved.call.tool,
      passes: await passesRecordCheck(input, resolved),
    })),
  );
  const refused = answers.find((answer) => !answer.passes);
  return refused
    ? { kind: 'refused', gate: 'record', message: TEXTS.gateRecordRefused(refused.tool) }
    : { kind: 'allowed' };
}

/**
 * The tools an approval is gated on: those of the card that need approval (`writeToolNames`), or,
 * for an approval of some calls only, those of the approved calls that need approval (by each
 * call's guard on the card). A card without recorded guards is gated whole, failing closed.
 */
function gatedToolsOf(card: StoredCard, approvedIndexes: ReadonlySet<number> | undefined): string[] {
  if (approvedIndexes === undefined || card.callGuards === undefined) return card.writeToolNames;
  const guarded = card.callGuards.filter(
    (entry) => approvedIndexes.has(entry.index) && needsHumanApproval(guardOnCard(card, entry)),
  );
  return [...new Set(guarded.map((entry) => entry.tool))];
}

async function passesRecordCheck(
  input: { principal: UserProfile; card: StoredCard; pages: PageStore; logger: Logger },
  { tool, call, arguments: parsed }: ResolvedCall,
): Promise<boolean> {
  if (!tool || typeof tool.mayViewerReadPreview !== 'function') return false;
  if (parsed.kind !== 'accepted') return false;
  try {
    return (
      (await tool.mayViewerReadPreview(parsed.value, input.principal, {
        runId: input.card.runId,
        pages: input.pages,
        actingUser: input.principal,
      })) === true
    );
  } catch (error) {
    input.logger.warn('record gate check failed', { tool: call.tool, errorClass: nameErrorClass(error) });
    return false;
  }
}
