import * as z from 'zod/mini';
import { refusingPrototypeKeys } from '../persisted-shape.js';

/**
 * The persisted shapes of external runs beside the run itself, each with its version and an
 * immutable fixture (`test/fixtures/client-key/`, `test/fixtures/execution-report/`).
 */
export const CLIENT_KEY_SCHEMA_VERSION = 1;
export const EXECUTION_REPORT_SCHEMA_VERSION = 1;

/**
 * Which run a caller's idempotency key started: the first submission with a key claims it,
 * and a retry reads it back. `requestDigest` (sha256 of the canonical request) tells a retry
 * from a different turn sent under the same key.
 */
export const clientKeyClaimSchema = z.object({
  schemaVersion: z.literal(CLIENT_KEY_SCHEMA_VERSION),
  owner: z.string().check(z.minLength(1)),
  clientKey: z.string().check(z.minLength(1)),
  runId: z.string().check(z.minLength(1)),
  requestDigest: z.string().check(z.minLength(1)),
  claimedAt: z.string(),
});
export type ClientKeyClaim = z.infer<typeof clientKeyClaimSchema>;

export const EXECUTION_OUTCOMES = ['succeeded', 'failed', 'skipped'] as const;
export type ExecutionOutcome = (typeof EXECUTION_OUTCOMES)[number];

/**
 * What the caller reported it did with one call of a decided turn, for the audit. `approved`
 * is what countersign had answered for the call: a report of a call it refused is kept (the
 * audit must show it) and flagged.
 */
export const executionReportSchema = z.object({
  schemaVersion: z.literal(EXECUTION_REPORT_SCHEMA_VERSION),
  runId: z.string().check(z.minLength(1)),
  index: z.number().check(z.int(), z.nonnegative()),
  outcome: z.enum(EXECUTION_OUTCOMES),
  approved: z.boolean(),
  reportedBy: z.string(),
  reportedAt: z.string(),
  detail: z.optional(z.string()),
});
export type ExecutionReport = z.infer<typeof executionReportSchema>;

/** Reads a stored claim of any known version; a future one or a prototype key does not parse. */
export const readableClientKeyClaimSchema = refusingPrototypeKeys<ClientKeyClaim>(clientKeyClaimSchema);
/** Reads a stored execution report of any known version. */
export const readableExecutionReportSchema = refusingPrototypeKeys<ExecutionReport>(executionReportSchema);

export type ClientKeyOutcome = { kind: 'claimed' } | { kind: 'exists'; existing: ClientKeyClaim };
export type ReportOutcome = { kind: 'recorded' } | { kind: 'exists'; existing: ExecutionReport };

/**
 * Port: what external runs keep beside the run. DynamoDB deployed and dynalite locally, behind
 * one adapter; in memory for the use-case tests. Both writes are conditional puts: the first
 * writer of a key wins, a later one reads the winner back.
 */
export interface ExternalRunStore {
  claimClientKey(claim: ClientKeyClaim): Promise<ClientKeyOutcome>;
  getClientKey(owner: string, clientKey: string): Promise<ClientKeyClaim | undefined>;
  recordExecution(report: ExecutionReport): Promise<ReportOutcome>;
  /** A run's reports, by call index. */
  listExecutions(runId: string): Promise<ExecutionReport[]>;
}
