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
 * A model provider. `converse` is the tool loop's one call; the other operations are
 * optional (see `ModelProviderOperations`). Errors are thrown as
 * `CountersignError('model-failed', <safe text>)`; the provider's own message never
 * reaches a client.
 */
export interface ModelProvider extends ModelProviderOperations {
  readonly name: string;
  converse(request: ModelRequest): Promise<ModelReply>;
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

export function textOf(blocks: ReadonlyArray<ContentBlock>): string {
  return blocks
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/*
 * The provider's other operations (seed 003 names them to say where skills never go). Skills
 * are injected for text generation only: `converse` (task execution), `complete` and
 * `translate`. `embed`, `vision` and `speech` never see them. A provider that lacks an
 * operation leaves it out; `requireModelOperation` turns that into a clear error.
 */

/** One part of a multimodal user message. */
export type PromptPart =
  | TextBlock
  | { type: 'image'; mediaType: string; data: string }
  | { type: 'audio'; mediaType: string; data: string };

/** A chat message of a completion prompt; `system` messages are never given skills. */
export interface PromptMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | PromptPart[];
}

export interface CompletionRequest {
  model: string;
  system?: string;
  /** A plain prompt, or a message list. */
  prompt: string | PromptMessage[];
  maxTokens?: number;
  temperature?: number;
}

export interface TranslationRequest {
  model: string;
  system?: string;
  /** The user prompt that carries the text to translate. */
  prompt: string | PromptMessage[];
  targetLanguage: string;
  sourceLanguage?: string;
}

export interface EmbeddingRequest {
  model: string;
  inputs: string[];
}

export interface VisionRequest {
  model: string;
  prompt: string;
  images: Array<{ mediaType: string; data: string }>;
}

export interface SpeechRequest {
  model: string;
  /** Text to speak (text-to-speech) or audio to transcribe. */
  input: { kind: 'text'; text: string } | { kind: 'audio'; mediaType: string; data: string };
}

/** Every model operation by name, with its request and reply. */
export interface ModelOperations {
  converse: { request: ModelRequest; reply: ModelReply };
  complete: { request: CompletionRequest; reply: { text: string } };
  translate: { request: TranslationRequest; reply: { text: string } };
  embed: { request: EmbeddingRequest; reply: { vectors: number[][] } };
  vision: { request: VisionRequest; reply: { text: string } };
  speech: { request: SpeechRequest; reply: { text?: string; audio?: string } };
}
export type ModelOperationName = keyof ModelOperations;

/** A provider with any of the other operations; `converse` stays the tool loop's one call. */
export type ModelProviderOperations = {
  [Name in Exclude<ModelOperationName, 'converse'>]?: (
    request: ModelOperations[Name]['request'],
  ) => Promise<ModelOperations[Name]['reply']>;
};

/** The operations skills are injected into (seed 003: text generation only). */
export const TEXT_GENERATION_OPERATIONS: ReadonlySet<ModelOperationName> = new Set([
  'converse',
  'complete',
  'translate',
]);
