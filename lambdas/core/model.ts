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

/**
 * A model provider. `converse` is the tool loop's one call. Errors are thrown as
 * `CountersignError('model-failed', <safe text>)`; the provider's own message never
 * reaches a client.
 */
export interface ModelProvider {
  readonly name: string;
  converse(request: ModelRequest): Promise<ModelReply>;
}

/** Picks the provider a configuration names (`bedrock`, `openai-compatible`, `scripted`). */
export interface ModelProviderResolver {
  resolve(providerName: string): ModelProvider;
}

export function textOf(blocks: ReadonlyArray<ContentBlock>): string {
  return blocks
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}
