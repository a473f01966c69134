import type { Message } from '../model.js';

/** Why nothing was injected although there was a block. */
export type InjectionWarning = 'no-user-message';

export interface Injection<T> {
  value: T;
  injected: boolean;
  warning?: InjectionWarning;
}

/**
 * Prepends the skills block to the first user message of a run transcript: to its leading
 * text part, or as a new leading text part of that same message. Never the system role,
 * never a new message: without a user message nothing is injected and a warning is returned.
 * The input is not mutated.
 *
 * @example
 * injectIntoTranscript([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], block).value
 * // [{ role: 'user', content: [{ type: 'text', text: block + 'Hi' }] }]
 */
export function injectIntoTranscript(messages: readonly Message[], block: string): Injection<Message[]> {
  if (block === '') return { value: [...messages], injected: false };
  const index = messages.findIndex((message) => message.role === 'user');
  const first = messages[index];
  if (first?.role !== 'user') return { value: [...messages], injected: false, warning: 'no-user-message' };
  const [lead, ...rest] = first.content;
  // The lookbehind keeps the match linear: a run of line feeds is tried from its first one only.
  const content: typeof first.content =
    lead?.type === 'text'
      ? [{ ...lead, text: `${block}${lead.text}` }, ...rest]
      : [{ type: 'text', text: block.replace(/(?<!\n)\n+$/, '') }, ...first.content];
  const value = [...messages];
  value[index] = { role: 'user', content };
  return { value, injected: true };
}
