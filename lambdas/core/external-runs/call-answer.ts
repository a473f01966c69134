import type { DecisionRecord } from '../approvals/decision-record.js';

/**
 * What a decision on record answers for one call: its per-call choice (`choices`) when there is
 * one, else the turn's decision; a rejection's reason is the call's own, else the decision's.
 *
 * @example
 * answerForCall({ decision: 'approve', choices: [{ index: 1, decision: 'reject', reason: 'no' }] }, 1)
 * // { decision: 'rejected', reason: 'no' }
 */
export function answerForCall(
  decision: Pick<DecisionRecord, 'decision' | 'reason' | 'choices'>,
  index: number,
): { decision: 'approved' | 'rejected'; reason?: string } {
  const choice = decision.choices?.find((candidate) => candidate.index === index);
  const approved = choice ? choice.decision === 'approve' : decision.decision === 'approve';
  if (approved) return { decision: 'approved' };
  const reason = choice?.reason ?? decision.reason;
  return { decision: 'rejected', ...(reason === undefined ? {} : { reason }) };
}
