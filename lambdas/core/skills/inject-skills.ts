import { CountersignError } from '../errors.js';
import {
  type Message,
  type ModelOperationName,
  type ModelOperations,
  type ModelProvider,
  type PromptMessage,
  TEXT_GENERATION_OPERATIONS,
} from '../model.js';

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
  const content: typeof first.content =
    lead?.type === 'text'
      ? [{ ...lead, text: `${block}${lead.text}` }, ...rest]
      : [{ type: 'text', text: block.replace(/\n+$/, '') }, ...first.content];
  const value = [...messages];
  value[index] = { role: 'user', content };
  return { value, injected: true };
}

/**
 * Prepends the skills block to a completion or translation prompt: a plain prompt string, or
 * the first `user` message of a message list (its string content, or the leading text part of
 * multimodal content). `system` messages are never touched and no message is ever added.
 */
export function injectIntoPrompt(
  prompt: string | readonly PromptMessage[],
  block: string,
): Injection<string | PromptMessage[]> {
  if (typeof prompt === 'string') {
    return block === '' ? { value: prompt, injected: false } : { value: `${block}${prompt}`, injected: true };
  }
  if (block === '') return { value: [...prompt], injected: false };
  const index = prompt.findIndex((message) => message.role === 'user');
  const first = prompt[index];
  if (first === undefined) return { value: [...prompt], injected: false, warning: 'no-user-message' };
  let content: PromptMessage['content'];
  if (typeof first.content === 'string') content = `${block}${first.content}`;
  else {
    const [lead, ...rest] = first.content;
    content =
      lead?.type === 'text'
        ? [{ ...lead, text: `${block}${lead.text}` }, ...rest]
        : [{ type: 'text', text: block.replace(/\n+$/, '') }, ...first.content];
  }
  const value = [...prompt];
  value[index] = { ...first, content };
  return { value, injected: true };
}

/**
 * The request an operation is sent with, given a skills block: text generation (`converse`,
 * `complete`, `translate`) gets the block in its first user message; `embed`, `vision` and
 * `speech` get their request back untouched, the very same object.
 */
export function withSkillBlock<Name extends ModelOperationName>(
  operation: Name,
  request: ModelOperations[Name]['request'],
  block: string,
): Injection<ModelOperations[Name]['request']> {
  if (!TEXT_GENERATION_OPERATIONS.has(operation) || block === '') return { value: request, injected: false };
  if (operation === 'converse') {
    const converse = request as ModelOperations['converse']['request'];
    const injection = injectIntoTranscript(converse.messages, block);
    return { ...injection, value: { ...converse, messages: injection.value } as typeof request };
  }
  const prompted = request as ModelOperations['complete' | 'translate']['request'];
  const injection = injectIntoPrompt(prompted.prompt, block);
  return { ...injection, value: { ...prompted, prompt: injection.value } as typeof request };
}

/**
 * Calls one operation of a provider with the skills block applied as `withSkillBlock` says.
 * An operation the provider lacks is a `configuration` error that names both.
 *
 * @example
 * await callModelOperation(provider, 'complete', { model, prompt: 'Summarise …' }, composition.block);
 */
export async function callModelOperation<Name extends ModelOperationName>(
  provider: ModelProvider,
  operation: Name,
  request: ModelOperations[Name]['request'],
  block: string,
): Promise<{
  reply: ModelOperations[Name]['reply'];
  injection: Injection<ModelOperations[Name]['request']>;
}> {
  const injection = withSkillBlock(operation, request, block);
  const call = (
    operation === 'converse'
      ? provider.converse.bind(provider)
      : provider[operation as Exclude<Name, 'converse'>]
  ) as ((request: ModelOperations[Name]['request']) => Promise<ModelOperations[Name]['reply']>) | undefined;
  if (call === undefined) throw unsupportedOperation(provider.name, operation);
  return { reply: await call.call(provider, injection.value), injection };
}

/** The error for an operation a provider does not offer. */
export function unsupportedOperation(providerName: string, operation: ModelOperationName): CountersignError {
  return new CountersignError(
    'configuration',
    `Model provider "${providerName}" does not support the "${operation}" operation; choose a provider that does.`,
  );
}
