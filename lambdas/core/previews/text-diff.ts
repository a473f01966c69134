import * as z from 'zod/mini';

// The shape of a word-level diff as a card keeps it (computed in diff-text-changes.ts, which
// alone loads the `diff` package: what reads a card needs the shape, not the library).

const partSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.enum(['same', 'removed', 'added']), text: z.string() }),
  /** Unchanged words left out between two kept runs: how many. */
  z.object({ kind: z.literal('elided'), words: z.number().check(z.int(), z.nonnegative()) }),
]);

/**
 * A field's word-level diff (issue #21): what is removed and added with a few unchanged words
 * around each change, bounded; `cut` when the rest was not kept, `tooDifferent` when the texts
 * differ too much to diff within its bounds (then it has no parts). Texts have their hidden and
 * bidi characters as markers already.
 */
export const textDiffSchema = z.object({
  field: z.string(),
  parts: z.array(partSchema),
  cut: z.optional(z.literal(true)),
  tooDifferent: z.optional(z.literal(true)),
});
export type TextDiff = z.infer<typeof textDiffSchema>;
