import * as z from 'zod/mini';
import {
  EXTERNAL_RUN_STATUSES,
  type ExecutionReportView,
  type ExternalRunView,
} from '../core/external-runs/external-answer.js';
import { EXECUTION_OUTCOMES } from '../core/external-runs/external-run-store.js';
import type { Agrees, SameShape } from './common-schemas.js';

// The response bodies of the routes agents that run elsewhere call (docs/external-agents.md),
// each checked at compile time against the domain type its handler returns.

const count = z.number().check(z.int(), z.nonnegative());

/** 202: the turn waits on its card (`repeated`: this client key's run, from an earlier request). */
export const submitExternalRunResponseSchema = z.object({
  runId: z.string(),
  status: z.literal('pending'),
  repeated: z.boolean(),
});

const executionReportViewSchema = z.object({
  index: count,
  outcome: z.enum(EXECUTION_OUTCOMES),
  approved: z.boolean(),
  reportedAt: z.string(),
  detail: z.optional(z.string()),
});

/** An external run as its caller reads it (GET, the report's answer, the webhook's `run`). */
export const externalRunViewSchema = z.object({
  runId: z.string(),
  status: z.enum(EXTERNAL_RUN_STATUSES),
  configurationId: z.string(),
  createdAt: z.string(),
  expiresAt: z.optional(z.string()),
  decidedAt: z.optional(z.string()),
  endedAt: z.optional(z.string()),
  reason: z.optional(z.string()),
  calls: z.optional(
    z.array(
      z.object({
        index: count,
        callId: z.string(),
        tool: z.string(),
        decision: z.enum(['approved', 'rejected']),
        reason: z.optional(z.string()),
        /** An approved call an approver edited: the arguments to run instead of the caller's own. */
        arguments: z.optional(z.record(z.string(), z.unknown())),
        /** An approved call an approver edited: who edited it. */
        edited: z.optional(z.object({ by: z.string() })),
      }),
    ),
  ),
  reports: z.array(executionReportViewSchema),
});

/** The JSON body of a webhook delivery: what happened, and the run as GET /external-runs/{id} shows it. */
export const externalRunWebhookSchema = z.object({
  type: z.literal('external_run.answered'),
  run: externalRunViewSchema,
});

/** Compile-time agreement of each response schema with the type its handler answers. */
export type ExternalShapesAgree = [
  Agrees<SameShape<z.output<typeof externalRunViewSchema>, ExternalRunView>>,
  Agrees<SameShape<z.output<typeof executionReportViewSchema>, ExecutionReportView>>,
];
