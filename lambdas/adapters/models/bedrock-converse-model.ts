import {
  type ContentBlock as BedrockContentBlock,
  type Message as BedrockMessage,
  type BedrockRuntimeClient,
  type Tool as BedrockTool,
  ConverseCommand,
  type ConverseCommandInput,
  type ConverseCommandOutput,
  CountTokensCommand,
  type ToolUseBlock,
} from '@aws-sdk/client-bedrock-runtime';
import type {
  Message,
  ModelCallOptions,
  ModelProvider,
  ModelReply,
  ModelRequest,
  TextBlock,
  ToolCallBlock,
  ToolSpecification,
} from '../../core/model.js';
import { asRecord, modelFailed, modelUnavailable } from './model-failure.js';

/** The SDK's JSON document type, taken from the client so no transitive package is imported. */
type DocumentType = NonNullable<ToolUseBlock['input']>;

/**
 * The Bedrock Converse API as a `ModelProvider`: one `ConverseCommand` per model turn, with
 * tool use. Errors become `CountersignError('model-failed')` naming the error class and HTTP
 * status only; Bedrock's message text is never passed on.
 *
 * @example
 * const model = new BedrockConverseModel(new BedrockRuntimeClient({}));
 * const reply = await model.converse({ model: 'anthropic.claude-3-5-sonnet-20240620-v1:0', messages, tools });
 */
export class BedrockConverseModel implements ModelProvider {
  public readonly name = 'bedrock';

  public constructor(private readonly client: BedrockRuntimeClient) {}

  /**
   * The AWS SDK makes the call, not the outbound policy (lambdas/adapters/outbound/): it follows
   * no redirect and talks to Bedrock's regional endpoint only; the caller's deadline aborts it
   * (`abortSignal`), the SDK's retries included, and the reply is bounded by `maxTokens`.
   */
  public async converse(request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelReply> {
    let output: ConverseCommandOutput;
    try {
      output = await this.client.send(
        new ConverseCommand(toConverseInput(request)),
        options.signal ? { abortSignal: options.signal } : {},
      );
    } catch (error) {
      throw classifyBedrockFailure(error);
    }
    // The SDK's standard retry mode retried inside `send`; it says how many requests it made.
    return { ...fromConverseOutput(output), attempts: { total: attemptsOf(output), throttled: 0 } };
  }

  /**
   * Bedrock's own count of the request's input tokens (CountTokens), for the context-window
   * manager: cl100k is not Claude's tokenizer. Counted on the foundation model an inference
   * profile routes to; models without CountTokens throw, and the caller falls back.
   */
  public async countInputTokens(request: ModelRequest): Promise<number> {
    const { messages, system, toolConfig } = toConverseInput(request);
    let inputTokens: number | undefined;
    try {
      ({ inputTokens } = await this.client.send(
        new CountTokensCommand({
          modelId: foundationModelOf(request.model),
          input: {
            converse: { messages, ...(system ? { system } : {}), ...(toolConfig ? { toolConfig } : {}) },
          },
        }),
      ));
    } catch (error) {
      throw classifyBedrockFailure(error);
    }
    if (typeof inputTokens !== 'number')
      throw modelFailed('Bedrock returned a reply that could not be read.');
    return inputTokens;
  }
}

/** `us.anthropic.claude-...` (a cross-Region inference profile) counts as `anthropic.claude-...`. */
function foundationModelOf(modelId: string): string {
  return modelId.replace(/^(?:us|us-gov|eu|apac|jp|au|ca|global)\./, '');
}

/** Our request in Converse terms. Exported for tests and for a caller that wants to log shapes. */
export function toConverseInput(request: ModelRequest): ConverseCommandInput {
  const input: ConverseCommandInput = {
    modelId: request.model,
    messages: request.messages.map(toBedrockMessage),
  };
  if (request.system !== undefined && request.system.trim() !== '') input.system = [{ text: request.system }];
  if (request.tools.length > 0) input.toolConfig = { tools: request.tools.map(toBedrockTool) };
  const inferenceConfig: NonNullable<ConverseCommandInput['inferenceConfig']> = {};
  if (request.maxTokens !== undefined) inferenceConfig.maxTokens = request.maxTokens;
  if (request.temperature !== undefined) inferenceConfig.temperature = request.temperature;
  if (Object.keys(inferenceConfig).length > 0) input.inferenceConfig = inferenceConfig;
  return input;
}

function toBedrockMessage(message: Message): BedrockMessage {
  const content: BedrockContentBlock[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        // Converse rejects blank text blocks; an empty text carries nothing the model needs.
        if (block.text.trim() !== '') content.push({ text: block.text });
        break;
      case 'tool_call':
        content.push({
          toolUse: { toolUseId: block.callId, name: block.name, input: toToolInputDocument(block.arguments) },
        });
        break;
      case 'tool_result':
        content.push({
          toolResult: {
            toolUseId: block.callId,
            content: [{ text: block.content === '' ? '(no output)' : block.content }],
            // Only some models accept `status`; it is sent when it carries information.
            ...(block.isError ? { status: 'error' as const } : {}),
          },
        });
        break;
    }
  }
  // A message must have content; this only happens when every text block was blank.
  if (content.length === 0) content.push({ text: '(empty)' });
  return { role: message.role, content };
}

/** Converse wants an object as tool input; arguments that were not one (unparsable elsewhere) are wrapped. */
function toToolInputDocument(argumentsValue: unknown): DocumentType {
  const record = asRecord(argumentsValue);
  return (record ?? { value: argumentsValue ?? null }) as DocumentType;
}

function toBedrockTool(tool: ToolSpecification): BedrockTool {
  return {
    toolSpec: {
      name: tool.name,
      description: tool.description,
      inputSchema: { json: tool.inputSchema as DocumentType },
    },
  };
}

/** Converse's reply in our terms; a reply without a message is unreadable, not an empty answer. */
export function fromConverseOutput(output: ConverseCommandOutput): ModelReply {
  const blocks = output.output?.message?.content;
  if (!Array.isArray(blocks)) throw modelFailed('Bedrock returned a reply without a message.');
  const content: Array<TextBlock | ToolCallBlock> = [];
  for (const block of blocks) {
    if (typeof block.text === 'string') {
      content.push({ type: 'text', text: block.text });
    } else if (block.toolUse !== undefined) {
      const { toolUseId, name, input } = block.toolUse;
      if (typeof toolUseId !== 'string' || typeof name !== 'string') {
        throw modelFailed('Bedrock returned a tool call without an id or a name.');
      }
      content.push({ type: 'tool_call', callId: toolUseId, name, arguments: input ?? {} });
    }
    // Reasoning, citations and other block kinds are not part of the loop's transcript.
  }
  const reply: ModelReply = { content, stopReason: toStopReason(output.stopReason) };
  const usage = output.usage;
  if (usage?.inputTokens !== undefined && usage.outputTokens !== undefined) {
    reply.usage = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
  }
  return reply;
}

function toStopReason(stopReason: string | undefined): ModelReply['stopReason'] {
  switch (stopReason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end_turn';
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    default:
      return 'other';
  }
}

/**
 * A safe reason for a failed Converse call: the SDK error class and HTTP status, which say
 * what went wrong (throttled, refused, unreachable, unreadable) without Bedrock's message text.
 * Throttling, a 5xx and an unreachable endpoint come after the SDK's own retries and are
 * transient (a later attempt may be answered); a refusal or an unreadable reply is not.
 */
function classifyBedrockFailure(error: unknown) {
  const record = asRecord(error);
  const errorName = typeof record?.name === 'string' ? record.name : 'Error';
  const metadata = asRecord(record?.$metadata);
  const status = typeof metadata?.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
  const total = typeof metadata?.attempts === 'number' && metadata.attempts > 0 ? metadata.attempts : 1;
  const safeName = /^[A-Za-z][A-Za-z0-9.]{0,80}$/.test(errorName) ? errorName : 'Error';
  if (safeName === 'ThrottlingException' || status === 429) {
    // The SDK retries throttling, so every attempt of a call that ends throttled was throttled.
    return modelUnavailable('Bedrock is throttling requests (ThrottlingException); try again later.', {
      total,
      throttled: total,
    });
  }
  const attempts = { total, throttled: 0 };
  if (status !== undefined && status >= 200 && status < 300) {
    // The call succeeded but the SDK could not deserialise the body.
    return modelFailed('Bedrock returned a reply that could not be read.', attempts);
  }
  if (status !== undefined && (status >= 500 || status === 408)) {
    return modelUnavailable(`Bedrock failed to answer (${safeName}, HTTP ${status}).`, attempts);
  }
  if (status !== undefined) {
    return modelFailed(`Bedrock refused the request (${safeName}, HTTP ${status}).`, attempts);
  }
  if (record !== undefined && '$response' in record) {
    return modelFailed('Bedrock returned a reply that could not be read.', attempts);
  }
  return modelUnavailable(`Bedrock could not be reached (${safeName}).`, attempts);
}

/** How many requests the SDK sent for a reply (its retries included). */
function attemptsOf(output: ConverseCommandOutput): number {
  const attempts = output.$metadata?.attempts;
  return typeof attempts === 'number' && attempts > 0 ? attempts : 1;
}
