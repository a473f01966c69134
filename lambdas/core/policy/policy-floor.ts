import * as z from 'zod/mini';

/** `always`: no run's owner approves their own write. `per-configuration`: the configuration says. */
export const FOUR_EYES_FLOOR_MODES = ['always', 'per-configuration'] as const;
/**
 * What approving needs beyond the `agent_approve` grant. `tool`: the approver may release writes
 * of every tool in the turn (ADR-133). `record`: that, and the approver passes each call's record
 * check (`mayViewerReadPreview`), so nobody approves a write to a record they cannot see.
 */
export const DECISION_GATES = ['tool', 'record'] as const;
export type DecisionGate = (typeof DECISION_GATES)[number];

export const MAX_REQUIRED_APPROVALS = 10;

export const requiredApprovalsSchema = z.number().check(z.int(), z.gte(1), z.lte(MAX_REQUIRED_APPROVALS));

/**
 * The deployment-wide policy floor (construct props deployed, an option locally). Every
 * configuration's own policy is tightened to it, never the other way round: the run's owner
 * and the configuration's admin cannot opt out of what the deployment requires.
 */
export const policyFloorSchema = z.strictObject({
  fourEyes: z._default(z.enum(FOUR_EYES_FLOOR_MODES), 'per-configuration'),
  /** Tools whose writes always need four-eyes, whatever the configuration says. */
  fourEyesTools: z._default(
    z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.maxLength(100)),
    [],
  ),
  requiredApprovals: z._default(requiredApprovalsSchema, 1),
  decisionGate: z._default(z.enum(DECISION_GATES), 'tool'),
});
export type PolicyFloor = z.infer<typeof policyFloorSchema>;
export type PolicyFloorInput = z.input<typeof policyFloorSchema>;

/** The floor of a deployment that sets none: today's behaviour, configuration by configuration. */
export const DEFAULT_POLICY_FLOOR: PolicyFloor = policyFloorSchema.parse({});

/** The policy one write turn is decided under. */
export interface TurnPolicy {
  fourEyes: boolean;
  requiredApprovals: number;
  decisionGate: DecisionGate;
}

/** The stricter of two policies, field by field. */
export function tightenPolicy(policy: TurnPolicy, other: Partial<TurnPolicy>): TurnPolicy {
  return {
    fourEyes: policy.fourEyes || other.fourEyes === true,
    requiredApprovals: Math.max(policy.requiredApprovals, other.requiredApprovals ?? 1),
    decisionGate: policy.decisionGate === 'record' || other.decisionGate === 'record' ? 'record' : 'tool',
  };
}

/**
 * A policy as a run record or a card stores it: one stored before k-of-n and the record gate
 * has neither field, and reads as 1 approval, `tool` gate.
 */
export interface StoredTurnPolicy {
  fourEyes: boolean;
  requiredApprovals?: number | undefined;
  decisionGate?: DecisionGate | undefined;
}

/**
 * A policy (a configuration's, or one stored on a run or card) raised to the floor. The tools
 * of the turn matter: a tool the floor names forces four-eyes for any turn that writes with it.
 */
export function applyPolicyFloor(
  policy: StoredTurnPolicy,
  floor: PolicyFloor | undefined,
  writeToolNames: readonly string[] = [],
): TurnPolicy {
  const effectiveFloor = floor ?? DEFAULT_POLICY_FLOOR;
  const stored: TurnPolicy = {
    fourEyes: policy.fourEyes,
    requiredApprovals: policy.requiredApprovals ?? 1,
    decisionGate: policy.decisionGate ?? 'tool',
  };
  return tightenPolicy(stored, {
    fourEyes:
      effectiveFloor.fourEyes === 'always' ||
      writeToolNames.some((tool) => effectiveFloor.fourEyesTools.includes(tool)),
    requiredApprovals: effectiveFloor.requiredApprovals,
    decisionGate: effectiveFloor.decisionGate,
  });
}
