import * as z from 'zod/mini';
import { escalationLadderSchema } from './approvals/escalation-ladder.js';
import { refusingPrototypeKeys } from './persisted-shape.js';
import { DECISION_GATES, requiredApprovalsSchema } from './policy/policy-floor.js';

/**
 * The run record's schema version. Records written before versions existed have none and read
 * as version 1; version 2 added the model usage, the recorded failure and the redrives, all
 * optional, so a version 1 record reads as a version 2 one without them (and a run started as
 * version 1 gains them as this version updates it); version 3 may say the run is `external` (an
 * agent that runs elsewhere submitted its turn), and reads every earlier version as a model run;
 * version 4 carries the configuration's escalation ladder in the run's policy
 * (`policy.escalation`; earlier versions read without one). Fixtures: `test/fixtures/run-record/`.
 */
export const RUN_RECORD_SCHEMA_VERSION = 4;

/**
 * What drives a run: a model loop in the state machine, or an agent that runs elsewhere and
 * asks for approval of its own turn (docs/external-agents.md).
 */
export const RUN_KINDS = ['model', 'external'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

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
const count = z.number().check(z.int(), z.nonnegative());

/** The statuses a failed run was in when its step failed: the one a redrive puts it back in. */
export const RESUMABLE_STATUSES = ['running', 'waiting'] as const;

/**
 * Why a run failed, as MarkFailed recorded it: the state that failed, the turn, the error name
 * the state machine caught (`countersign.model-unavailable`, `Lambda.TooManyRequestsException`,
 * never a message), whether a later attempt may succeed, and the status to resume in.
 */
export const runFailureSchema = z.object({
  step: z.string(),
  turn: count,
  error: z.string(),
  transient: z.boolean(),
  resumeAs: z.enum(RESUMABLE_STATUSES),
  failedAt: z.string(),
});
export type RunFailure = z.infer<typeof runFailureSchema>;

export const runRecordSchema = z.object({
  schemaVersion: z.optional(
    z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(RUN_RECORD_SCHEMA_VERSION)]),
  ),
  runId: z.string(),
  /** Version 3: absent on a model run (and on every earlier record). */
  kind: z.optional(z.enum(RUN_KINDS)),
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
    /** Where an unanswered card goes next, and when (version 4); absent: it does not escalate. */
    escalation: z.optional(escalationLadderSchema),
  }),
  /** Who cancelled the run (POST /runs/{id}/cancel), and why when they said. */
  cancelledBy: z.optional(z.string()),
  cancellationReason: z.optional(z.string()),
  /** Tool names of the turn waiting for a decision (no arguments). */
  pendingToolNames: z.optional(z.array(z.string())),
  /** The model tokens of every model turn of the run so far (version 2). */
  usage: z.optional(z.object({ inputTokens: count, outputTokens: count, modelCalls: count })),
  /** The last failure MarkFailed recorded (version 2); kept after a redrive, for the record. */
  failure: z.optional(runFailureSchema),
  /** The run's redrives (POST /runs/{id}/redrive): how many, the last one's author and time (version 2). */
  redrive: z.optional(
    z.object({ count: z.number().check(z.int(), z.positive()), by: z.string(), at: z.string() }),
  ),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

/** A run in its owner's list ("my runs"): the record's plaintext fields a list shows. */
export const runSummarySchema = z.pick(runRecordSchema, {
  runId: true,
  label: true,
  status: true,
  configurationId: true,
  createdAt: true,
  updatedAt: true,
  endedAt: true,
});
export type RunSummary = z.infer<typeof runSummarySchema>;

/** Reads a stored run record of any known version; a future one or a prototype key does not parse. */
export const readableRunRecordSchema = refusingPrototypeKeys<RunRecord>(runRecordSchema);
