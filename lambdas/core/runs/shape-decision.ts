import {
  type CallChoice,
  contentOfChoices,
  kindOfChoices,
  resolveCallChoices,
} from '../approvals/call-choices.js';
import { type CallEdit, resolveCallEdits } from '../approvals/call-edits.js';
import type { UnsealedCard } from '../approvals/card-reader.js';
import { groupCallsDecidedTogether } from '../approvals/decision-groups.js';
import { type DecisionRecord, readCardShown, readEditsOnRecord } from '../approvals/decision-record.js';
import type { StoredCard } from '../approvals/stored-card.js';
import { canonicalJson } from '../canonical-json.js';
import { CountersignError, isCountersignError } from '../errors.js';
import type { DecisionDependencies } from '../run-dependencies.js';
import type { Tool } from '../tools/tool.js';
import type { DecisionRequest } from './decide-run.js';

/**
 * What a decision body amounts to on its card: approve every call, approve some (`choices`),
 * reject every call (`choices` when each call got its own say), or edit some (`edits`).
 */
export type ShapedDecision =
  | { decision: 'approve'; choices?: CallChoice[] }
  | { decision: 'reject'; choices?: CallChoice[] }
  | { decision: 'edit'; edits: CallEdit[] };

/** A call of the card as shaping reads it: its tool as registered now, for an edit's schema. */
export interface ShapedCall {
  index: number;
  tool: string;
  arguments: unknown;
  /** An external run's call: whether its caller declared the tool editable. */
  editable?: boolean | undefined;
  registeredTool?: Tool | undefined;
}

/**
 * Shapes a decision body on the card's calls: per-call choices resolved (a body whose every call
 * is approved is the whole-turn approval it always was; every call rejected, a rejection), an
 * edit checked by its tools' schemas. What cannot apply is a 400 naming the field.
 *
 * @example
 * shapeDecision({ digest, decision: 'approve', calls: [{ index: 1, decision: 'reject' }] }, calls, [])
 * // { decision: 'approve', choices: [{ index: 0, …, decision: 'approve' }, { index: 1, …, decision: 'reject' }] }
 */
function shapeDecision(
  request: DecisionRequest,
  calls: readonly ShapedCall[],
  groups: ReadonlyArray<readonly number[]>,
): ShapedDecision {
  if (request.decision === 'edit') {
    const edits = resolveCallEdits({ calls, edits: request.edits ?? [] });
    if (edits.kind === 'refused')
      throw new CountersignError('bad-request', edits.message, { field: edits.field });
    return { decision: 'edit', edits: edits.edits };
  }
  if (request.calls === undefined) return { decision: request.decision };
  const resolved = resolveCallChoices({
    calls,
    decision: request.decision,
    reason: request.reason,
    overrides: request.calls,
    groups,
  });
  if (resolved.kind === 'refused') {
    throw new CountersignError('bad-request', resolved.message, { field: resolved.field });
  }
  const kind = kindOfChoices(resolved.choices);
  if (kind === 'approve') return { decision: 'approve' };
  return { decision: kind === 'reject' ? 'reject' : 'approve', choices: resolved.choices };
}

/**
 * What a decision is, for telling a repeat from a different decision: the same per-call choices
 * (reasons aside) or the same edits make the same decision.
 *
 * @example
 * contentOfShaped({ decision: 'approve' }) === contentOfRecord(existing) // a repeat
 */
function contentOfShaped(shaped: ShapedDecision): string {
  if (shaped.decision === 'edit') return contentOfEdits(shaped.edits);
  if (shaped.decision === 'approve' && shaped.choices) return contentOfChoices(shaped.choices);
  return shaped.decision;
}

/** The content of a decision on record, as {@link contentOfShaped} says it. */
export function contentOfRecord(record: DecisionRecord): string {
  if (record.decision === 'edit') return contentOfEdits(readEditsOnRecord(record));
  if (record.decision === 'approve' && record.choices) return contentOfChoices(record.choices);
  return record.decision;
}

/** The edits of a decision as the record keeps them: JSON text of each call's new arguments. */
export function serializeEdits(edits: readonly CallEdit[]): string {
  return canonicalJson(edits.map(({ index, tool, arguments: value }) => ({ index, tool, arguments: value })));
}

function contentOfEdits(edits: ReadonlyArray<{ index: number; arguments: unknown }>): string {
  const ordered = [...edits].sort((left, right) => left.index - right.index);
  return `edit:${canonicalJson(ordered.map((edit) => [edit.index, edit.arguments ?? null]))}`;
}

/**
 * The body shaped on the card's calls (per-call choices, edits checked by their tools' schemas),
 * opening the card only when the body makes more than a whole-turn decision.
 */
export async function shapeOnCard(
  dependencies: DecisionDependencies,
  request: DecisionRequest,
  card: StoredCard,
  unsealOnce: () => Promise<UnsealedCard>,
): Promise<ShapedDecision> {
  if (request.calls === undefined && request.edits === undefined) return shapeDecision(request, [], []);
  const { calls } = await unsealOnce();
  const shapedCalls = calls.map(({ call, tool }) => ({
    index: call.index,
    tool: call.tool,
    arguments: call.arguments,
    editable: call.editable,
    registeredTool: tool,
  }));
  // What the pause recorded (the tools as they were); a card from before it: the tools as they are.
  const groups =
    card.decisionGroups ??
    groupCallsDecidedTogether(shapedCalls, (tool) => dependencies.tools.get(tool)?.decidedWith);
  return shapeDecision(request, shapedCalls, groups);
}

/** The calls an approval approves (a per-call decision), or an edit rewrites; every call otherwise. */
export function approvedIndexesOf(shaped: ShapedDecision): ReadonlySet<number> | undefined {
  if (shaped.decision === 'edit') return new Set(shaped.edits.map((edit) => edit.index));
  if (!shaped.choices) return undefined;
  return new Set(shaped.choices.filter((choice) => choice.decision === 'approve').map((c) => c.index));
}

/**
 * What a repeated body amounts to, shaped on the calls the decision on record says its card
 * showed (the card itself may be closed): compared with the record, reasons aside.
 */
export function contentOfRequest(request: DecisionRequest, existing: DecisionRecord): string {
  const shown = readCardShown(existing.cardShown).calls;
  try {
    // The edit was checked when it was made: a repeat is compared as sent, not checked again.
    if (request.decision === 'edit') {
      return contentOfShaped({
        decision: 'edit',
        edits: (request.edits ?? []).map((edit) => ({
          index: edit.index,
          tool: shown.find((call) => call.index === edit.index)?.tool ?? '',
          arguments: edit.arguments,
          originalArguments: undefined,
        })),
      });
    }
    return contentOfShaped(shapeDecision(request, shown, []));
  } catch (error) {
    if (isCountersignError(error, 'bad-request')) return 'refused';
    throw error;
  }
}
