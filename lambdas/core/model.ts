import { CountersignError } from './errors.js';

/**
 * The model port. The core speaks this shape; `lambdas/adapters/models/` translates it to
 * Bedrock Converse, OpenAI-compatible chat completions, or the local scripted model.
 */
export type TextBlock = { type: 'text'; text: string };
export type ToolCallBlock = { type: 'tool_call'; callId: string; name: string; arguments: unknown };
export type ToolResultBlock = { type: 'tool_result'; callId: string; content: string; isError: boolean };
export type ContentBlock = TextBlock | ToolCallBlock | ToolResultBlock;

export type Message =
  | { role: 'user'; content: Array<TextBlock | ToolResultBlock> }
  | { role: 'assistant'; content: Array<TextBlock | ToolCallBlock> };

/** What the model is told about one tool: its JSON-schema input. */
export interface ToolSpecification {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  model: string;
  system?: string;
  messages: Message[];
  tools: ToolSpecification[];
  maxTokens?: number;
  temperature?: number;
}

export interface ModelReply {
  content: Array<TextBlock | ToolCallBlock>;
  stopReason: 'end_turn' | 'tool_use' | 'max_tokens' | 'other';
  usage?: { inputTokens: number; outputTokens: number };
  /** How many requests the provider's adapter sent for this reply, and how many were throttled. */
  attempts?: ModelAttempts;
}

/** The requests behind one model call: the first and its retries, and the throttled among them. */
export interface ModelAttempts {
  total: number;
  throttled: number;
}

/**
 * A failed model call, as its adapter classified it: `transient` when another attempt later may
 * succeed (throttling or a provider outage past the adapter's retries, an unreachable endpoint),
 * so a run failed by it may be redriven; otherwise the provider refused the request or answered
 * something unreadable, which the same request would meet again. The message is the adapter's
 * own safe text, never the provider's.
 *
 * @example
 * throw new ModelCallFailure('The model provider is throttling requests (HTTP 429).', {
 *   transient: true,
 *   attempts: { total: 4, throttled: 4 },
 * });
 */
export class ModelCallFailure extends CountersignError {
  public readonly transient: boolean;
  public readonly attempts: ModelAttempts;

  public constructor(message: string, details: { transient: boolean; attempts: ModelAttempts }) {
    super(details.transient ? 'model-unavailable' : 'model-failed', message);
    this.transient = details.transient;
    this.attempts = details.attempts;
  }
}

/** How one model call may be ended early: the caller's deadline, carried through every retry. */
export interface ModelCallOptions {
  /** Aborted when the caller gives up (a synchronous request's timeout): nothing more goes out. */
  readonly signal?: AbortSignal;
}

/**
 * A model provider. `converse` is its one call: the tool loop's, and, with no tools, the
 * completion and translation of the configuration-driven path (`lambdas/core/generation/`).
 * Errors are thrown as {@link ModelCallFailure} (code `model-unavailable` when transient,
 * `model-failed` otherwise) with a safe text; the provider's own message never reaches a client.
 */
export interface ModelProvider {
  readonly name: string;
  converse(request: ModelRequest, options?: ModelCallOptions): Promise<ModelReply>;
  /**
   * The provider's own count of the input tokens of `request` (Bedrock CountTokens), for the
   * context-window manager; a provider without one is estimated with cl100k.
   */
  countInputTokens?(request: ModelRequest): Promise<number>;
}

/** Picks the provider a configuration names (`bedrock`, `openai-compatible`, `scripted`). */
export interface ModelProviderResolver {
  resolve(providerName: string): ModelProvider;
}

/** The text of a reply, its text blocks joined by newlines (tool calls left out). */
export function textOf(blocks: ReadonlyArray<ContentBlock>): string {
  return blocks
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/*
 * Seed 003 names every operation a model may offer to say where skills go: text generation
 * (task execution, completion, translation) gets them, embeddings, vision and speech never do.
 * countersign serves text generation only, all three over `converse`; the others are named so
 * that a caller asking for them is refused explicitly (`requireTextGeneration`).
 */
export const MODEL_OPERATIONS = ['converse', 'complete', 'translate', 'embed', 'vision', 'speech'] as const;
export type ModelOperationName = (typeof MODEL_OPERATIONS)[number];
