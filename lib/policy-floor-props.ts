import type { IConstruct } from 'constructs';
import {
  DECISION_GATES,
  type DecisionGate,
  FOUR_EYES_FLOOR_MODES,
  MAX_REQUIRED_APPROVALS,
  type PolicyFloor,
} from '../lambdas/core/policy/policy-floor.js';
import { invalidProp } from './validation-error.js';

/**
 * The deployment-wide approval policy floor. Every configuration's own policy is raised to it,
 * never lowered: a configuration (or the run's owner choosing one) can tighten, not escape it.
 */
export interface CountersignPolicyFloor {
  /**
   * `always`: no run's owner may approve their own writes, whatever the configuration says.
   * `per-configuration`: the configuration's `options.fourEyes` decides.
   *
   * @default - 'per-configuration'
   */
  readonly fourEyes?: (typeof FOUR_EYES_FLOOR_MODES)[number];
  /**
   * Tools whose writes always need four-eyes (e.g. `['update_page_metadata']`).
   *
   * @default - none
   */
  readonly fourEyesTools?: readonly string[];
  /**
   * Distinct approvers every write turn needs at least (k-of-n), 1 to 10.
   *
   * @default - 1
   */
  readonly requiredApprovals?: number;
  /**
   * `record`: approving also needs the approver to pass each write call's record check
   * (`mayViewerReadPreview`); `tool`: tool-level authority is enough.
   *
   * @default - 'tool'
   */
  readonly decisionGate?: DecisionGate;
}

const TOOL_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** The floor with its defaults, or an error that quotes the bad value and says how to fix it. */
export function resolvePolicyFloor(
  scope: IConstruct,
  floor: CountersignPolicyFloor | undefined,
): PolicyFloor {
  const fourEyes = floor?.fourEyes ?? 'per-configuration';
  if (!FOUR_EYES_FLOOR_MODES.includes(fourEyes)) {
    throw invalidProp(
      scope,
      `policyFloor.fourEyes ${JSON.stringify(fourEyes)} is invalid; use 'always' or 'per-configuration'.`,
    );
  }
  const fourEyesTools = [...(floor?.fourEyesTools ?? [])];
  const badTool = fourEyesTools.find((tool) => typeof tool !== 'string' || !TOOL_NAME.test(tool));
  if (badTool !== undefined || fourEyesTools.length > 100) {
    throw invalidProp(
      scope,
      `policyFloor.fourEyesTools ${JSON.stringify(badTool ?? fourEyesTools.length)} is invalid; list at most 100 tool names such as 'update_page_metadata'.`,
    );
  }
  const requiredApprovals = floor?.requiredApprovals ?? 1;
  if (
    !Number.isInteger(requiredApprovals) ||
    requiredApprovals < 1 ||
    requiredApprovals > MAX_REQUIRED_APPROVALS
  ) {
    throw invalidProp(
      scope,
      `policyFloor.requiredApprovals ${JSON.stringify(requiredApprovals)} is invalid; use a whole number from 1 to ${MAX_REQUIRED_APPROVALS} (default 1).`,
    );
  }
  const decisionGate = floor?.decisionGate ?? 'tool';
  if (!DECISION_GATES.includes(decisionGate)) {
    throw invalidProp(
      scope,
      `policyFloor.decisionGate ${JSON.stringify(decisionGate)} is invalid; use 'tool' or 'record'.`,
    );
  }
  return { fourEyes, fourEyesTools, requiredApprovals, decisionGate };
}
