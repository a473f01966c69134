import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import type { Message, ToolSpecification } from '../model.js';

/**
 * A token estimator whose encoding ships inside its npm package (gpt-tokenizer, cl100k_base):
 * nothing is fetched at run time. Other models tokenize differently, so the count is
 * multiplied by a safety margin: 1.1 for OpenAI models, 1.35 for every other model.
 */
export interface TokenEstimate {
  tokens: number;
  /** The multiplier applied for this model's tokenizer. */
  margin: number;
}

/** Special-token strings in a skill or a transcript are counted as text, never refused. */
const COUNT_OPTIONS = { disallowedSpecial: new Set<string>() };
/** Role markers and framing a provider adds per message. */
const PER_MESSAGE_OVERHEAD_TOKENS = 8;

export function tokenizerMarginFor(model: string): number {
  return /^(?:gpt-|o\d|chatgpt|text-)/i.test(model) ? 1.1 : 1.35;
}

/**
 * Estimated tokens of a text for `model`, margin included. Byte-level BPE never yields more
 * tokens than UTF-8 bytes, so `upperBoundTokens` is a cheap bound callers check first.
 *
 * @example
 * estimateTextTokens('Hello world', 'anthropic.claude-3') // ≈ 3 (2 tokens × 1.35, rounded up)
 */
export function estimateTextTokens(text: string, model: string): number {
  if (text === '') return 0;
  return Math.ceil(countTokens(text, COUNT_OPTIONS) * tokenizerMarginFor(model));
}

/** An upper bound that needs no tokenizing: one token per UTF-8 byte, margin included. */
export function upperBoundTokens(text: string, model: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') * tokenizerMarginFor(model));
}

/** Estimated tokens of one transcript message: its texts, tool calls and results, plus framing. */
export function estimateMessageTokens(message: Message, model: string): number {
  return estimateTextTokens(messageText(message), model) + PER_MESSAGE_OVERHEAD_TOKENS;
}

export function upperBoundMessageTokens(message: Message, model: string): number {
  return upperBoundTokens(messageText(message), model) + PER_MESSAGE_OVERHEAD_TOKENS;
}

export function estimateToolsTokens(tools: readonly ToolSpecification[], model: string): number {
  return tools.length === 0 ? 0 : estimateTextTokens(JSON.stringify(tools), model);
}

function messageText(message: Message): string {
  return message.content
    .map((block) => {
      if (block.type === 'text') return block.text;
      if (block.type === 'tool_call') return `${block.name} ${JSON.stringify(block.arguments ?? null)}`;
      return block.content;
    })
    .join('\n');
}

/**
 * The context window of a model, in tokens, when the configuration does not say. Unknown
 * models get a conservative 32,000.
 */
export function contextWindowTokensFor(model: string): number {
  if (/claude/i.test(model)) return 200_000;
  if (/^(?:gpt-4o|gpt-4\.1|gpt-5|o\d|chatgpt)/i.test(model)) return 128_000;
  if (/nova-(?:pro|lite|premier)/i.test(model)) return 300_000;
  return 32_000;
}
