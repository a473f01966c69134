import * as z from 'zod/mini';
import { textDiffSchema } from '../previews/text-diff.js';
import { callGuardSchema } from './needs-human-approval.js';

const positionSchema = z.number().check(z.int(), z.nonnegative());

/** A write preview of one call (docs/previews.md): the lines captured at the pause, stored with the call. */
export const callPreviewSchema = z.object({
  lines: z.array(z.string()),
  failed: z.boolean(),
  /** The call's arguments would be refused by its tool: the lines say so, and read no record. */
  refused: z.optional(z.boolean()),
  /** Word-level diffs of the long texts the write changes (a tool that gives them), computed at the pause. */
  diffs: z.optional(z.array(textDiffSchema)),
});
export type CallPreview = z.infer<typeof callPreviewSchema>;

/**
 * THE pending call: one call the model proposed in a turn, at its position in that turn. The
 * run state, the approval card, the turn digest, the decision gate and the audit all read this
 * one shape; the card adds the call's preview, the run state the model's call id.
 */
export const pendingCallSchema = z.object({
  index: positionSchema,
  tool: z.string(),
  arguments: z.unknown(),
  /** Whether the tool was offered to the model in this turn (allowed and registered). */
  offered: z.boolean(),
  /** The target's version sealed at the pause, for a tool with `readPrecondition`; in the digest. */
  precondition: z.optional(z.string()),
  /** This call's record changed after an earlier card was shown: its new card says so. */
  recordChanged: z.optional(z.boolean()),
  /**
   * How the call is guarded, as the strictest step so far classified it (the model turn, then the
   * pause: never less than before). Absent on calls recorded before it was: classified afresh.
   */
  guard: z.optional(callGuardSchema),
  /**
   * An approver edited this call: `arguments` are theirs, `originalArguments` what the model
   * proposed. The card shows who and what changed; the model is told with what the call ran.
   */
  edited: z.optional(z.object({ by: z.string(), originalArguments: z.unknown() })),
  /**
   * A call of an external run whose caller declared its tool editable (`tools[].editable`): an
   * approver may edit its arguments. A tool of ours says so itself (`Tool.editable`).
   */
  editable: z.optional(z.boolean()),
});
export type PendingCall = z.infer<typeof pendingCallSchema>;

/** A pending call in the sealed run state: the model's call id pairs it with its result. */
export const runStateCallSchema = z.extend(pendingCallSchema, { callId: z.string() });
export type RunStateCall = z.infer<typeof runStateCallSchema>;

/** A pending call on an approval card: its preview inline, absent when none was captured. */
export const cardCallSchema = z.extend(pendingCallSchema, { preview: z.optional(callPreviewSchema) });
export type CardCall = z.infer<typeof cardCallSchema>;
