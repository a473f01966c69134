import * as z from 'zod/mini';
import { approverGroupSchema } from '../approvals/card-routing.js';
import type { DecisionRecord } from '../approvals/decision-record.js';
import {
  applyPolicyFloor,
  DECISION_GATES,
  DEFAULT_POLICY_FLOOR,
  policyFloorSchema,
  requiredApprovalsSchema,
  type TurnPolicy,
} from './policy-floor.js';

/**
 * A configuration's approval policy as a proposal states it: each field replaces today's value,
 * an absent one keeps it. `approverGroups: []` routes the configuration's cards to every approver.
 */
const proposedConfigurationPolicySchema = z.strictObject({
  fourEyes: z.optional(z.boolean()),
  requiredApprovals: z.optional(requiredApprovalsSchema),
  decisionGate: z.optional(z.enum(DECISION_GATES)),
  approverGroups: z.optional(z.array(approverGroupSchema).check(z.maxLength(10))),
});
export type ProposedConfigurationPolicy = z.infer<typeof proposedConfigurationPolicySchema>;

/**
 * The file `npm run policy:replay -- --policy <file>` reads: a policy floor and configuration
 * policies to try against the decisions on record (docs/runbook.md, "Replaying a policy").
 * Strict: a misspelt field is refused, naming it, never replayed as if absent.
 */
export const policyProposalSchema = z.strictObject({
  /** The floor proposed for the deployment. @default - the default floor (no floor at all) */
  floor: z._default(policyFloorSchema, DEFAULT_POLICY_FLOOR),
  /** By configuration id: what changes in its policy. */
  configurations: z._default(
    z.record(z.string().check(z.minLength(1), z.maxLength(100)), proposedConfigurationPolicySchema),
    {},
  ),
});
export type PolicyProposal = z.infer<typeof policyProposalSchema>;

/** What a decision on record is replayed with: the record, and what was known of its run and people. */
export interface RecordedDecision {
  record: DecisionRecord & { decision: 'approve' | 'reject' };
  /** The run's owner, configuration and task, and the policy and routing it recorded at start. */
  run: {
    owner: string;
    configurationId: string;
    policy: {
      fourEyes: boolean;
      requiredApprovals?: number | undefined;
      decisionGate?: TurnPolicy['decisionGate'] | undefined;
    };
    approverGroups: readonly string[];
  };
  /** The tools of the calls the card showed (the four-eyes tools of the floor name tools). */
  toolNames: readonly string[];
  /** The configuration's own policy and routing today, and the task's routing, where they exist. */
  today?: {
    policy?: { fourEyes: boolean; requiredApprovals: number; decisionGate: TurnPolicy['decisionGate'] };
    approverGroups?: readonly string[] | undefined;
    taskApproverGroups?: readonly string[] | undefined;
  };
  /** What the decider's record says today (an admin sees every card); absent: no record. */
  decider?: { groups: readonly string[]; admin: boolean };
}

/** How a past decision would have gone under the proposal; `unaffected` when it would have gone the same way. */
export type ReplayFinding =
  /** An approval four-eyes would have refused: the run's owner approved alone. */
  | { kind: 'refused'; reason: 'four-eyes' }
  /** An approval that had fewer distinct approvers who count than the proposal requires. */
  | { kind: 'needed-more-approvers'; had: number; required: number }
  /** An approval the `record` gate would also have checked per call: offline, that check cannot be replayed. */
  | { kind: 'record-check' }
  /** The card would have gone to other groups; `deciderOutside`: the decider is in none of them. */
  | { kind: 'other-group'; from: string[]; to: string[]; deciderOutside: boolean };

export interface ReplayedDecision {
  runId: string;
  turn: number;
  decision: 'approve' | 'reject';
  decidedAt: string;
  decidedBy: string;
  configurationId: string;
  /** The policy the proposal would have put in force for this turn. */
  proposed: TurnPolicy;
  findings: ReplayFinding[];
}

/**
 * One recorded decision under a proposed policy: the configuration's policy (today's, with the
 * proposal's changes, else what the run recorded) raised to the proposed floor for the turn's
 * tools, and its routing (a task's own groups first, as when runs start). Pure: the replay reads
 * the records, this says what would have changed.
 *
 * @example
 * replayDecision(proposal, recorded).findings // [{ kind: 'needed-more-approvers', had: 1, required: 2 }]
 */
export function replayDecision(proposal: PolicyProposal, recorded: RecordedDecision): ReplayedDecision {
  const { record, run } = recorded;
  const change = proposal.configurations[run.configurationId] ?? {};
  const base = recorded.today?.policy ?? {
    fourEyes: run.policy.fourEyes,
    requiredApprovals: run.policy.requiredApprovals ?? 1,
    decisionGate: run.policy.decisionGate ?? 'tool',
  };
  const proposed = applyPolicyFloor(
    { ...base, ...withoutRouting(change) },
    proposal.floor,
    recorded.toolNames,
  );
  const findings: ReplayFinding[] = [];
  if (record.decision === 'approve') findings.push(...approvalFindings(recorded, proposed));
  const routing = rerouting(recorded, change);
  if (routing) findings.push(routing);
  return {
    runId: record.runId,
    turn: record.turn,
    decision: record.decision,
    decidedAt: record.decidedAt,
    decidedBy: record.decidedBy,
    configurationId: run.configurationId,
    proposed,
    findings,
  };
}

function approvalFindings(recorded: RecordedDecision, proposed: TurnPolicy): ReplayFinding[] {
  const { record, run } = recorded;
  const approvers = record.approvedBy ?? [record.decidedBy];
  // Four-eyes never counts the owner: alone, the approval is refused; among others, it counts less.
  const counted = approvers.filter((userId) => !(proposed.fourEyes && userId === run.owner));
  const findings: ReplayFinding[] = [];
  if (counted.length === 0) findings.push({ kind: 'refused', reason: 'four-eyes' });
  else if (counted.length < proposed.requiredApprovals) {
    findings.push({
      kind: 'needed-more-approvers',
      had: counted.length,
      required: proposed.requiredApprovals,
    });
  }
  if (proposed.decisionGate === 'record' && (run.policy.decisionGate ?? 'tool') !== 'record') {
    findings.push({ kind: 'record-check' });
  }
  return findings;
}

/** Where the card would have gone, when that is not where it went. */
function rerouting(
  recorded: RecordedDecision,
  change: ProposedConfigurationPolicy,
): ReplayFinding | undefined {
  const from = [...recorded.run.approverGroups].sort();
  const configured = change.approverGroups ?? recorded.today?.approverGroups ?? recorded.run.approverGroups;
  // A task that names its own groups routes its runs, whatever its configuration says.
  const to = [...(recorded.today?.taskApproverGroups ?? configured)].sort();
  if (from.length === to.length && from.every((group, index) => group === to[index])) return undefined;
  const { decider } = recorded;
  const deciderOutside =
    to.length > 0 &&
    decider !== undefined &&
    !decider.admin &&
    !to.some((group) => decider.groups.includes(group));
  return { kind: 'other-group', from, to, deciderOutside };
}

function withoutRouting(
  change: ProposedConfigurationPolicy,
): Omit<ProposedConfigurationPolicy, 'approverGroups'> {
  const { approverGroups: _routing, ...policy } = change;
  return policy;
}
