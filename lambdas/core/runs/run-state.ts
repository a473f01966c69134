import * as z from 'zod/mini';
import { runStateCallSchema } from '../approvals/pending-call.js';
import { externalTurnSchema } from '../external-runs/external-turn-state.js';
import { userProfileSchema } from '../identity.js';
import type { Message } from '../model.js';
import { readSchemaVersion, refusal } from '../persisted-shape.js';

/**
 * The sealed working state of a run: transcript and the calls of the last model turn.
 * Persisted shapes carry a schema version; every version keeps an immutable fixture in
 * `test/fixtures/run-state/` that later code must still read. Version 2 adds
 * `completedCalls`; version 3 may carry an external run's turn (`external`,
 * docs/external-agents.md); version 4 marks a pending call an approver edited (`edited`: by whom,
 * the model's own arguments); version 5 marks an external run's call whose caller declared its tool
 * editable (`editable`). Earlier versions read as they are, without what came later.
 */
export const RUN_STATE_SCHEMA_VERSION = 5;

const textBlock = z.object({ type: z.literal('text'), text: z.string() });
const toolCallBlock = z.object({
  type: z.literal('tool_call'),
  callId: z.string(),
  name: z.string(),
  arguments: z.unknown(),
});
const toolResultBlock = z.object({
  type: z.literal('tool_result'),
  callId: z.string(),
  content: z.string(),
  isError: z.boolean(),
});
export const messageSchema = z.discriminatedUnion('role', [
  z.object({
    role: z.literal('user'),
    content: z.array(z.discriminatedUnion('type', [textBlock, toolResultBlock])),
  }),
  z.object({
    role: z.literal('assistant'),
    content: z.array(z.discriminatedUnion('type', [textBlock, toolCallBlock])),
  }),
]);

/**
 * A call of the turn that ran before the turn went back for review: its result waits for the
 * others'. `index` is its place on the card it was approved on (the calls left are renumbered).
 */
const completedCallSchema = z.object({
  index: z.number().check(z.int(), z.nonnegative()),
  callId: z.string(),
  content: z.string(),
  isError: z.boolean(),
});
export type CompletedCall = z.infer<typeof completedCallSchema>;

export const runStateSchema = z.object({
  schemaVersion: z.union([
    z.literal(1),
    z.literal(2),
    z.literal(3),
    z.literal(4),
    z.literal(RUN_STATE_SCHEMA_VERSION),
  ]),
  runId: z.string(),
  turn: z.number().check(z.int(), z.nonnegative()),
  system: z.optional(z.string()),
  transcript: z.array(messageSchema),
  pendingCalls: z.array(runStateCallSchema),
  finalText: z.optional(z.string()),
  /**
   * The acting user as they were when the run started. Previews are produced under it at the
   * pause; every execution re-reads the user, so a revoked right still stops the write.
   */
  actingUser: z.optional(userProfileSchema),
  /**
   * The turn whose approved writes were not applied because a record changed after its card
   * was shown; this turn puts the same calls on a fresh card.
   */
  reopenedFromTurn: z.optional(z.number().check(z.int(), z.nonnegative())),
  /**
   * Calls of this turn that already ran (their results recorded) when a record changed as a
   * later call wrote: only the others wait on the fresh card, and the model gets every result
   * together once they ran (version 2).
   */
  completedCalls: z.optional(z.array(completedCallSchema)),
  /** Version 3: what an agent that runs elsewhere sent with its turn (docs/external-agents.md). */
  external: z.optional(externalTurnSchema),
  /**
   * The request the run was started with (its input, without a task's template or skills), for
   * the context its cards show. Absent on runs started before it was kept.
   */
  request: z.optional(z.string()),
});
export type RunState = Omit<z.infer<typeof runStateSchema>, 'schemaVersion'> & {
  schemaVersion: typeof RUN_STATE_SCHEMA_VERSION;
  transcript: Message[];
};

/**
 * Parses a decrypted run state, refusing anything that is not a known version, or that holds
 * a prototype key outside the model's own arguments.
 *
 * @example
 * const state = parseRunState(await unsealJson(sealer, 'run-state', runId, sealed));
 */
export function parseRunState(value: unknown): RunState {
  readSchemaVersion(value, 'sealed run state');
  const parsed = runStateSchema.safeParse(value);
  if (!parsed.success) throw refusal('sealed run state');
  // Versions 1 and 2 are the current version without what was added since: they read as it.
  return { ...parsed.data, schemaVersion: RUN_STATE_SCHEMA_VERSION } as RunState;
}
