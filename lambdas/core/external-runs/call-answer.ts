import type { DecisionRecord } from '../approvals/decision-record.js';

/**
 * What a decision on record answers for one call. An approved call an approver edited carries
 * the arguments to run instead of the caller's own, and who edited them; a rejected call its
 * reason (the call's own, else the decision's).
 */
export type CallAnswer =
  | { decision: 'approved'; arguments?: Record<string, unknown>; edited?: { by: string } }
  | { decision: 'rejected'; reason?: string };

/** A call as the answer reads it: its arguments now, and the edit that made them (run state). */
export interface AnsweredCall {
  index: number;
  arguments: unknown;
  edited?: { by: string } | undefined;
}

/**
 * Whether a decision on record approves the call at `index`: its per-call choice (`choices`)
 * when there is one, else the turn's decision; a rejection's reason is the call's own, else the
 * decision's.
 *
 * @example
 * decideCall({ decision: 'approve', choices: [{ index: 1, decision: 'reject', reason: 'no' }] }, 1)
 * // { decision: 'rejected', reason: 'no' }
 */
export function decideCall(
  decision: Pick<DecisionRecord, 'decision' | 'reason' | 'choices'>,
  index: number,
): { decision: 'approved' } | { decision: 'rejected'; reason?: string } {
  const choice = decision.choices?.find((candidate) => candidate.index === index);
  const approved = choice ? choice.decision === 'approve' : decision.decision === 'approve';
  if (approved) return { decision: 'approved' };
  const reason = choice?.reason ?? decision.reason;
  return { decision: 'rejected', ...(reason === undefined ? {} : { reason }) };
}

/**
 * The answer for `call` ({@link decideCall}). An edit is a new proposal, approved on the fresh
 * card like any other: the calls it rewrote hold the editor's arguments, which are what an
 * approval approves and what the caller must run.
 *
 * @example
 * answerForCall({ decision: 'approve' }, { index: 0, arguments: { amount: 90 }, edited: { by: 'ana' } })
 * // { decision: 'approved', arguments: { amount: 90 }, edited: { by: 'ana' } }
 */
export function answerForCall(
  decision: Pick<DecisionRecord, 'decision' | 'reason' | 'choices'>,
  call: AnsweredCall,
): CallAnswer {
  const answer = decideCall(decision, call.index);
  if (answer.decision === 'rejected' || call.edited === undefined) return answer;
  // An external call's arguments are a JSON object: the submission and the edit both check it.
  const edited = call.arguments as Record<string, unknown>;
  return { decision: 'approved', arguments: edited, edited: { by: call.edited.by } };
}
