import type { Message, ToolSpecification } from '../model.js';

/**
 * Estimated tokens of a text, margin included. Three estimators, chosen per provider by
 * `chooseTokenEstimator`:
 * - cl100k (gpt-tokenizer, the encoding ships inside its npm package, loaded on first use:
 *   it is most of model-turn's cold start), times a margin of 1.1 for OpenAI models and 1.35
 *   for every other model;
 * - the provider's own count of the whole send (Bedrock CountTokens), shared out by bytes;
 * - the byte bound: byte-level BPE never yields more tokens than UTF-8 bytes.
 */
export interface TokenEstimator {
  /** What the estimate rests on, for logs and docs: `cl100k`, `provider`, `byte-bound`. */
  readonly basis: 'cl100k' | 'provider' | 'byte-bound';
  countText(text: string): number;
}

/** Special-token strings in a skill or a transcript are counted as text, never refused. */
const COUNT_OPTIONS = { disallowedSpecial: new Set<string>() };
/** Role markers and framing a provider adds per message. */
const PER_MESSAGE_OVERHEAD_TOKENS = 8;

export function tokenizerMarginFor(model: string): number {
  return /^(?:gpt-|o\d|chatgpt|text-)/i.test(model) ? 1.1 : 1.35;
}

let cl100k: Promise<(text: string) => number> | undefined;

/**
 * The cl100k estimator for `model`, margin included. The tokenizer module is imported on the
 * first call only. Byte-level BPE never yields more tokens than UTF-8 bytes, so
 * `upperBoundTokens` is a cheap bound callers check first.
 *
 * @example
 * (await loadCl100kEstimator('anthropic.claude-3')).countText('Hello world') // ≈ 3 (2 tokens × 1.35)
 */
export async function loadCl100kEstimator(model: string): Promise<TokenEstimator> {
  cl100k ??= import('gpt-tokenizer/encoding/cl100k_base').then(
    ({ countTokens }) =>
      (text: string) =>
        countTokens(text, COUNT_OPTIONS),
  );
  const countTokens = await cl100k;
  const margin = tokenizerMarginFor(model);
  const countPieces = (text: string) =>
    piecesOf(text).reduce((tokens, piece) => tokens + countTokens(piece), 0);
  return {
    basis: 'cl100k',
    countText: (text) => (text === '' ? 0 : Math.ceil(countPieces(text) * margin)),
  };
}

/**
 * cl100k's BPE costs the square of a run without a break (40,000 letters: seconds), and a run
 * input, a tool result or a model's text may be one such run: it is counted in pieces of at
 * most this many code units, so counting stays linear in the text (issue #20).
 */
export const COUNTED_PIECE_LENGTH = 512;

/**
 * `text` in pieces of at most {@link COUNTED_PIECE_LENGTH}, each cut before a whitespace where
 * one is near the end (cl100k attaches a space to the word after it, so prose counts the same),
 * else anywhere but inside a surrogate pair.
 */
function piecesOf(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > COUNTED_PIECE_LENGTH) {
    let end = start + COUNTED_PIECE_LENGTH;
    let space = end;
    while (space > end - COUNTED_PIECE_LENGTH / 4 && !/\s/.test(text.charAt(space))) space -= 1;
    if (/\s/.test(text.charAt(space))) end = space;
    else if (/[\uDC00-\uDFFF]/.test(text.charAt(end))) end -= 1;
    pieces.push(text.slice(start, end));
    start = end;
  }
  pieces.push(text.slice(start));
  return pieces;
}

/** The byte bound as an estimator: the fallback when nothing better is at hand. */
export function createByteBoundEstimator(model: string): TokenEstimator {
  return { basis: 'byte-bound', countText: (text) => upperBoundTokens(text, model) };
}

/**
 * A provider's count of a whole send (`totalTokens` over `totalBytes` of text) shared out by
 * bytes, so trimming can price each message; 5 % on top for the uneven share.
 */
export function createProviderCountEstimator(totalTokens: number, totalBytes: number): TokenEstimator {
  const tokensPerByte = (totalTokens / Math.max(1, totalBytes)) * 1.05;
  return {
    basis: 'provider',
    countText: (text) => Math.ceil(Buffer.byteLength(text, 'utf8') * tokensPerByte),
  };
}

/** Estimated tokens of a text; kept for callers that hold an estimator. */
export function estimateTextTokens(text: string, estimator: TokenEstimator): number {
  return text === '' ? 0 : estimator.countText(text);
}

/** An upper bound that needs no tokenizing: one token per UTF-8 byte, margin included. */
export function upperBoundTokens(text: string, model: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') * tokenizerMarginFor(model));
}

/** Estimated tokens of one transcript message: its texts, tool calls and results, plus framing. */
export function estimateMessageTokens(message: Message, estimator: TokenEstimator): number {
  return estimateTextTokens(messageText(message), estimator) + PER_MESSAGE_OVERHEAD_TOKENS;
}

export function upperBoundMessageTokens(message: Message, model: string): number {
  return upperBoundTokens(messageText(message), model) + PER_MESSAGE_OVERHEAD_TOKENS;
}

export function estimateToolsTokens(tools: readonly ToolSpecification[], estimator: TokenEstimator): number {
  return tools.length === 0 ? 0 : estimateTextTokens(JSON.stringify(tools), estimator);
}

/** The text of a message as the estimators count it. */
export function messageText(message: Message): string {
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
