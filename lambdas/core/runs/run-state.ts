import * as z from 'zod/mini';
import { CountersignError } from '../errors.js';
import { userProfileSchema } from '../identity.js';
import type { Message } from '../model.js';

/**
 * The sealed working state of a run: transcript and the calls of the last model turn.
 * Persisted shapes carry a schema version; every version keeps an immutable fixture in
 * `test/fixtures/run-state/` that later code must still read.
 */
export const RUN_STATE_SCHEMA_VERSION = 1;

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

/** One call the model proposed in the current turn, at its position in that turn. */
export const pendingCallSchema = z.object({
  index: z.number().check(z.int(), z.nonnegative()),
  callId: z.string(),
  tool: z.string(),
  arguments: z.unknown(),
  /** Whether the tool was offered to the model in this turn (allowed and registered). */
  offered: z.boolean(),
  /** The target's version sealed at the pause, for a tool with `readPrecondition`; in the digest. */
  precondition: z.optional(z.string()),
  /** This call's record changed after an earlier card was shown: its new card says so. */
  recordChanged: z.optional(z.boolean()),
});
export type PendingCall = z.infer<typeof pendingCallSchema>;

export const runStateSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  turn: z.number().check(z.int(), z.nonnegative()),
  system: z.optional(z.string()),
  transcript: z.array(messageSchema),
  pendingCalls: z.array(pendingCallSchema),
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
});
export type RunState = z.infer<typeof runStateSchema> & { transcript: Message[] };

/** Parses a decrypted run state, refusing anything that is not a known version. */
export function parseRunState(value: unknown): RunState {
  const parsed = runStateSchema.safeParse(value);
  if (!parsed.success) {
    throw new CountersignError('sealed-state-rejected', 'The sealed run state has an unknown shape.', {
      expose: true,
    });
  }
  return parsed.data as RunState;
}
