import * as z from 'zod/mini';
import { escalationLadderSchema } from '../approvals/escalation-ladder.js';
import { refusingPrototypeKeys } from '../persisted-shape.js';
import { DECISION_GATES, requiredApprovalsSchema } from '../policy/policy-floor.js';

/**
 * The run record's schema version. Version 2 carries the configuration's escalation ladder in
 * the run's policy; records written before versions existed have none and read as version 1,
 * which reads as version 2 without a ladder. Fixtures: `test/fixtures/run-record/`.
 */
export const RUN_RECORD_SCHEMA_VERSION = 2;

export const RUN_STATUSES = ['running', 'waiting', 'completed', 'failed', 'expired', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Terminal statuses: nothing resumes a run in one of these. */
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set([
  'completed',
  'failed',
  'expired',
  'cancelled',
]);

/**
 * The plaintext, queryable part of a run. Nothing here is secret: no transcript, no
 * arguments, no token. Those live in the sealed state.
 */
export const runRecordSchema = z.object({
  schemaVersion: z.optional(z.union([z.literal(1), z.literal(RUN_RECORD_SCHEMA_VERSION)])),
  runId: z.string(),
  owner: z.string(),
  label: z.string(),
  configurationId: z.string(),
  taskId: z.optional(z.string()),
  status: z.enum(RUN_STATUSES),
  turn: z.number().check(z.int(), z.nonnegative()),
  /** How many executions this run has used; a long run continues as a new execution. */
  executionCount: z.number().check(z.int(), z.positive()),
  /** The Step Functions execution currently driving the run. */
  executionId: z.optional(z.string()),
  /** The turn the current execution started at (turns per execution are bounded). */
  executionStartTurn: z.number().check(z.int(), z.nonnegative()),
  createdAt: z.string(),
  updatedAt: z.string(),
  pausedAt: z.optional(z.string()),
  expiresAt: z.optional(z.string()),
  endedAt: z.optional(z.string()),
  /** A readable, client-safe reason for `failed` or `expired`. */
  failureReason: z.optional(z.string()),
  /**
   * The configuration's approval policy as it was when the run started: it governs the whole
   * run, and keeps the pause and the decision to one read.
   */
  policy: z.object({
    fourEyes: z.boolean(),
    revealRejectionReason: z.boolean(),
    // Optional: runs started before k-of-n and the record gate read as 1 approval, `tool` gate.
    requiredApprovals: z.optional(requiredApprovalsSchema),
    decisionGate: z.optional(z.enum(DECISION_GATES)),
    /** Where the run's cards go (issue #16); absent: every approver, as before routing. */
    approverGroups: z.optional(z.array(z.string())),
    /** Where an unanswered card goes next, and when (version 2); absent: it does not escalate. */
    escalation: z.optional(escalationLadderSchema),
  }),
  /** Who cancelled the run (POST /runs/{id}/cancel), and why when they said. */
  cancelledBy: z.optional(z.string()),
  cancellationReason: z.optional(z.string()),
  /** Tool names of the turn waiting for a decision (no arguments). */
  pendingToolNames: z.optional(z.array(z.string())),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

/** Reads a stored run record of any known version; a future one or a prototype key does not parse. */
export const readableRunRecordSchema = refusingPrototypeKeys<RunRecord>(runRecordSchema);
