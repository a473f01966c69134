import * as z from 'zod/mini';
import { excerptOf } from '../excerpt-text.js';
import type { Message } from '../model.js';

/** Each text of a card's context keeps at most this many characters (code points), cut with `…`. */
export const CARD_CONTEXT_MAX_CHARACTERS = 2_000;

const contextTextSchema = z.object({
  text: z.string(),
  /** How long the whole text is: more than `text` holds when it was cut. */
  totalCharacters: z.number().check(z.int(), z.nonnegative()),
});
export type ContextText = z.infer<typeof contextTextSchema>;

/**
 * What a reviewer needs besides the calls (issue #21): the request that started the run, the
 * model's own text in the turn that proposed the calls (its stated reason), and the owner's
 * display name. Captured when the run pauses and sealed with the card, so reading a card never
 * decrypts a transcript. All of it is untrusted text, shown marked and isolated.
 */
export const cardContextSchema = z.object({
  request: z.optional(contextTextSchema),
  reasoning: z.optional(contextTextSchema),
  ownerName: z.optional(z.string()),
});
export type CardContext = z.infer<typeof cardContextSchema>;

/**
 * The context of a pausing turn: the run's request (absent for runs started before it was
 * kept), the text of the transcript's last assistant message (the turn proposing the calls) and
 * the owner's display name, each bounded.
 *
 * @example
 * captureCardContext({ request: 'Set the title', transcript, ownerName: 'Eda Editor' }).reasoning?.text
 */
export function captureCardContext(input: {
  request: string | undefined;
  transcript: readonly Message[];
  ownerName: string | undefined;
}): CardContext {
  const proposing = [...input.transcript].reverse().find((message) => message.role === 'assistant');
  const reasoning = (proposing?.content ?? [])
    .flatMap((block) => (block.type === 'text' ? [block.text.trim()] : []))
    .filter((text) => text.length > 0)
    .join('\n\n');
  return {
    ...(input.request ? { request: contextTextOf(input.request) } : {}),
    ...(reasoning ? { reasoning: contextTextOf(reasoning) } : {}),
    ...(input.ownerName ? { ownerName: excerptOf(input.ownerName, 200) } : {}),
  };
}

function contextTextOf(text: string): ContextText {
  return { text: excerptOf(text, CARD_CONTEXT_MAX_CHARACTERS), totalCharacters: Array.from(text).length };
}

/** A stored context as it reads; a malformed one is no context (the card still reads). */
export function readCardContext(value: unknown): CardContext | undefined {
  const parsed = cardContextSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
