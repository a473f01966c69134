import type { ApproverResponse } from './approver-response.js';

/** How a set of responses went: counts, rates and times from the card appearing to the answer. */
export interface ResponseStatistics {
  responses: number;
  approvals: number;
  rejects: number;
  /** Rejects over responses; null without responses. */
  rejectRate: number | null;
  /** Edits: calls an approver rewrote instead of approving or rejecting them. */
  edits: number;
  /** Edits over responses; null without responses. */
  editShare: number | null;
  /** Seconds from the card appearing to the answer: the median and the 90th percentile (nearest rank). */
  medianResponseSeconds: number | null;
  p90ResponseSeconds: number | null;
  /** Approvals given within `quickSeconds` of the card appearing, and their share of all approvals. */
  quickApprovals: number;
  quickApprovalShare: number | null;
}

export interface GroupStatistics extends ResponseStatistics {
  group: string;
}

export interface ApproverStatistics extends ResponseStatistics {
  approver: string;
  /** The groups of the cards they answered. */
  groups: string[];
}

/**
 * Statistics of approver responses per approver group and per approver (docs/runbook.md,
 * "Approver analytics"). A response to a card routed to two groups counts in both. Pure.
 *
 * @example
 * summarizeApproverResponses(responses, 10).groups[0]?.quickApprovalShare // 0.8: most approvals within 10 s
 */
export function summarizeApproverResponses(
  responses: readonly ApproverResponse[],
  quickSeconds: number,
): { groups: GroupStatistics[]; approvers: ApproverStatistics[] } {
  const byGroup = new Map<string, ApproverResponse[]>();
  const byApprover = new Map<string, ApproverResponse[]>();
  for (const response of responses) {
    for (const group of response.groups) addTo(byGroup, group, response);
    addTo(byApprover, response.approver, response);
  }
  const groups = [...byGroup.entries()]
    .sort(([left], [right]) => compare(left, right))
    .map(([group, members]) => ({ group, ...computeResponseStatistics(members, quickSeconds) }));
  const approvers = [...byApprover.entries()]
    .sort(([left], [right]) => compare(left, right))
    .map(([approver, members]) => ({
      approver,
      groups: [...new Set(members.flatMap((member) => member.groups))].sort(),
      ...computeResponseStatistics(members, quickSeconds),
    }));
  return { groups, approvers };
}

function computeResponseStatistics(
  responses: readonly ApproverResponse[],
  quickSeconds: number,
): ResponseStatistics {
  const approvals = responses.filter((response) => response.outcome === 'approve');
  const rejects = responses.filter((response) => response.outcome === 'reject').length;
  const edits = responses.filter((response) => response.outcome === 'edit').length;
  const quick = approvals.filter((response) => response.responseMilliseconds <= quickSeconds * 1000);
  const times = responses
    .map((response) => response.responseMilliseconds)
    .sort((left, right) => left - right);
  return {
    responses: responses.length,
    approvals: approvals.length,
    rejects,
    rejectRate: ratio(rejects, responses.length),
    edits,
    editShare: ratio(edits, responses.length),
    medianResponseSeconds: percentileSeconds(times, 0.5),
    p90ResponseSeconds: percentileSeconds(times, 0.9),
    quickApprovals: quick.length,
    quickApprovalShare: ratio(quick.length, approvals.length),
  };
}

/** The nearest-rank percentile of sorted milliseconds, in seconds to a tenth. */
function percentileSeconds(sorted: readonly number[], fraction: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(fraction * sorted.length));
  return Math.round((sorted[rank - 1] ?? 0) / 100) / 10;
}

function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 1000) / 1000;
}

function addTo(map: Map<string, ApproverResponse[]>, key: string, response: ApproverResponse): void {
  const members = map.get(key);
  if (members) members.push(response);
  else map.set(key, [response]);
}

function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
