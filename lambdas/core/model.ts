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
}

/** How one model call may be ended early: the caller's deadline, carried through every retry. */
export interface ModelCallOptions {
  /** Aborted when the caller gives up (a synchronous request's timeout): nothing more goes out. */
  readonly signal?: AbortSignal;
}

/**
 * A model provider. `converse` is its one call: the tool loop's, and, with no tools, the
 * completion and translation of the configuration-driven path (`lambdas/core/generation/`).
 * Errors are thrown as `CountersignError('model-failed', <safe text>)`; the provider's own
 * message never reaches a client.
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
