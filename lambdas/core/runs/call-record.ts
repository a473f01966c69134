import * as z from 'zod/mini';
import { refusingPrototypeKeys } from '../persisted-shape.js';

/**
 * The call ledger: one record per approved call of a turn (run, turn, call index), written
 * conditionally before the call runs and after it ran, so a retried ExecuteTools never runs a
 * call that ran and reuses its result instead. Fixtures: `test/fixtures/call-record/`.
 */
export const CALL_RECORD_SCHEMA_VERSION = 1;

/**
 * `started`: an attempt took the call and has not reported back (it runs, or it died running);
 * `retrying`: it failed transiently and applied nothing, so the next attempt takes it again;
 * `ran`: its result is recorded, and no attempt runs it again.
 */
export const CALL_STATES = ['started', 'retrying', 'ran'] as const;
export type CallState = (typeof CALL_STATES)[number];

const positionSchema = z.number().check(z.int(), z.nonnegative());
const binarySchema = z.custom<Uint8Array>((value) => value instanceof Uint8Array);

export const callRecordSchema = z.object({
  schemaVersion: z.literal(CALL_RECORD_SCHEMA_VERSION),
  runId: z.string().check(z.minLength(1)),
  turn: positionSchema,
  index: positionSchema,
  tool: z.string(),
  state: z.enum(CALL_STATES),
  /** The ExecuteTools attempt that wrote this state: a later attempt takes a call over only from it. */
  attemptId: z.string().check(z.minLength(1)),
  updatedAt: z.string(),
  /** Transient failures so far: at MAXIMUM_TOOL_ATTEMPTS the call ends "not applied". */
  transientFailures: positionSchema,
  /** The result once `ran`, sealed like run state (purpose `call-result`): it may quote a record. */
  sealedResult: z.optional(binarySchema),
});
export type CallRecord = z.infer<typeof callRecordSchema>;

/** Reads a stored call record; a future version, a malformed item or a prototype key does not parse. */
export const readableCallRecordSchema = refusingPrototypeKeys<CallRecord>(callRecordSchema);

/** What the sealed result of a call that ran holds. */
export const callResultSchema = z.object({
  content: z.string(),
  isError: z.boolean(),
  /** The tool refused because its record changed after the card was shown: the turn asks again. */
  recordChanged: z.optional(z.boolean()),
});
export type CallResult = z.infer<typeof callResultSchema>;

/**
 * Which stored record a ledger write may replace: none (`absent`, the first attempt), or the one
 * an attempt wrote in a given state. Anything else means another attempt moved it meanwhile.
 */
export type CallRecordExpectation =
  | { kind: 'absent' }
  | { kind: 'held'; attemptId: string; state: CallState };

/**
 * The idempotency key a tool gets for one call: the same for every attempt at that call, and
 * different for any other call (docs/runbook.md, "Idempotency").
 *
 * @example
 * deriveIdempotencyKey('run-1', 3, 0); // 'run-1/3/0'
 */
export function deriveIdempotencyKey(runId: string, turn: number, index: number): string {
  return `${runId}/${turn}/${index}`;
}
