import { canonicalJson } from '../canonical-json.js';
import { TEXTS } from '../texts.js';

/** What the model is told of one call of a decided turn. */
export interface CallOutcomeText {
  content: string;
  isError: boolean;
}

/**
 * What the model reads for a call an approver refused: that it was denied, and the approver's
 * reason only when the configuration reveals reasons (`revealRejectionReason`).
 *
 * @example
 * refusedCallOutcome('update_page_metadata', 'wrong page', true)
 * // { content: 'Error: tool "update_page_metadata" was denied by the operator. Reason given: wrong page', isError: true }
 */
export function refusedCallOutcome(
  tool: string,
  reason: string | undefined,
  revealReason: boolean,
): CallOutcomeText {
  return {
    content: `${TEXTS.toolDenied(tool)}${revealReason && reason ? TEXTS.callRejectedNote(reason) : ''}`,
    isError: true,
  };
}

/**
 * The outcome of a call that ran with an approver's edit instead of the model's arguments: the
 * model's history says so, and with what it ran, before what the tool answered.
 *
 * @example
 * editedCallOutcome({ content: 'Updated.', isError: false }, { editedBy: 'ana', arguments: { title: 'Spring' } })
 */
export function editedCallOutcome(
  outcome: CallOutcomeText,
  edit: { editedBy: string; arguments: unknown },
): CallOutcomeText {
  return {
    ...outcome,
    content: `${TEXTS.callEditedNote(edit.editedBy, canonicalJson(edit.arguments ?? null))}\n${outcome.content}`,
  };
}
