import * as z from 'zod/mini';
import { canonicalJson, sha256Hex } from '../canonical-json.js';
import { TEXTS } from '../texts.js';

/** A turn holds at most this many calls (MAX_TURN_CALLS): a body naming more names calls no card has. */
const MAX_CHOICES = 50;

/**
 * One call's choice in a decision body (`calls`): approve it or reject it, a rejection with its
 * own reason. Calls the body does not name take the body's `decision`.
 */
export const callChoiceRequestSchema = z.strictObject({
  index: z.number().check(z.int(), z.nonnegative()),
  decision: z.enum(['approve', 'reject']),
  reason: z.optional(z.string().check(z.maxLength(2000))),
});
export const callChoicesRequestSchema = z.array(callChoiceRequestSchema).check(z.maxLength(MAX_CHOICES));
export type CallChoiceRequest = z.infer<typeof callChoiceRequestSchema>;

/** What a decision does with one call of the turn: the decision record keeps one per call. */
export const callChoiceSchema = z.object({
  index: z.number().check(z.int(), z.nonnegative()),
  tool: z.string(),
  decision: z.enum(['approve', 'reject']),
  /** Why this call was rejected (only on a rejection, when the approver said). */
  reason: z.optional(z.string()),
});
export type CallChoice = z.infer<typeof callChoiceSchema>;

/**
 * What a set of choices amounts to: every call approved (`approve`), every call rejected
 * (`reject`: the turn is refused, as a whole-turn rejection), or some of each (`partial`: the
 * approved calls run, the model is told each rejected one was refused and why).
 */
export type ChoicesKind = 'approve' | 'reject' | 'partial';

export type ChoicesResolution =
  | { kind: 'resolved'; choices: CallChoice[] }
  /** The body's per-call choices cannot apply to this card: a 400 naming `field`. */
  | { kind: 'refused'; field: string; message: string };

/**
 * The choices a decision makes, one per call of the card, from the body's `decision` (the default
 * for every call) and its `calls` (each overriding one call). A rejected call's reason is its
 * own, else the body's `reason`. Refused, naming the field: an index no call on the card has, a
 * call named twice, a reason on an approved call, or choices that split calls decided together.
 *
 * @example
 * resolveCallChoices({ calls, decision: 'approve', overrides: [{ index: 1, decision: 'reject', reason: 'wrong page' }], groups: [] })
 * // { kind: 'resolved', choices: [{ index: 0, …, decision: 'approve' }, { index: 1, …, decision: 'reject', reason: 'wrong page' }] }
 */
export function resolveCallChoices(input: {
  calls: ReadonlyArray<{ index: number; tool: string }>;
  decision: 'approve' | 'reject';
  reason?: string | undefined;
  overrides?: readonly CallChoiceRequest[] | undefined;
  groups: ReadonlyArray<readonly number[]>;
}): ChoicesResolution {
  const byIndex = new Map<number, CallChoiceRequest>();
  const overrides = input.overrides ?? [];
  for (const [position, override] of overrides.entries()) {
    const field = `body.calls.${position}`;
    if (!input.calls.some((call) => call.index === override.index)) {
      return refused(`${field}.index`, TEXTS.callNotOnCard(override.index, input.calls.length));
    }
    if (byIndex.has(override.index)) return refused(`${field}.index`, TEXTS.choiceNamedTwice(override.index));
    if (override.decision === 'approve' && override.reason !== undefined) {
      return refused(`${field}.reason`, TEXTS.choiceReasonOnApproval);
    }
    byIndex.set(override.index, override);
  }
  const choices = input.calls.map((call): CallChoice => {
    const override = byIndex.get(call.index);
    const decision = override?.decision ?? input.decision;
    const reason = decision === 'reject' ? (override?.reason ?? input.reason) : undefined;
    return { index: call.index, tool: call.tool, decision, ...(reason ? { reason } : {}) };
  });
  for (const group of input.groups) {
    const decisions = new Set(
      choices.filter((choice) => group.includes(choice.index)).map((c) => c.decision),
    );
    if (decisions.size > 1) {
      const tools = [...new Set(choices.filter((choice) => group.includes(choice.index)).map((c) => c.tool))];
      return refused('body.calls', TEXTS.choicesSplitGroup(group, tools));
    }
  }
  return { kind: 'resolved', choices };
}

/**
 * @example
 * kindOfChoices([{ decision: 'approve' }, { decision: 'reject' }]) // 'partial'
 */
export function kindOfChoices(choices: ReadonlyArray<Pick<CallChoice, 'decision'>>): ChoicesKind {
  const approved = choices.filter((choice) => choice.decision === 'approve').length;
  if (approved === choices.length) return 'approve';
  return approved === 0 ? 'reject' : 'partial';
}

/**
 * What two approvers must share for their approvals to count together (k-of-n): the same
 * decision for every call. Reasons are each approver's own words and are not part of it.
 *
 * @example
 * contentOfChoices(choices) // 'sha256:9f2c…'
 */
export function contentOfChoices(choices: ReadonlyArray<Pick<CallChoice, 'index' | 'decision'>>): string {
  const pattern = [...choices]
    .sort((left, right) => left.index - right.index)
    .map((choice) => [choice.index, choice.decision]);
  return `sha256:${sha256Hex(canonicalJson(pattern))}`;
}

function refused(field: string, message: string): ChoicesResolution {
  return { kind: 'refused', field, message };
}

export { MAX_CHOICES };
