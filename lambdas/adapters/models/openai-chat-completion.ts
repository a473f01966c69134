import * as z from 'zod/mini';
import type {
  Message,
  ModelReply,
  ModelRequest,
  TextBlock,
  ToolCallBlock,
  ToolSpecification,
} from '../../core/model.js';
import { modelFailed } from './model-failure.js';

// The OpenAI chat completions wire format in the core's model terms, both ways; the HTTP calls,
// retries and key reading are openai-compatible-model.ts'.

type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** Our request as a chat completion body. */
export function toChatCompletionRequest(request: ModelRequest): Record<string, unknown> {
  const messages: ChatMessage[] = [];
  if (request.system !== undefined && request.system.trim() !== '') {
    messages.push({ role: 'system', content: request.system });
  }
  for (const message of request.messages) messages.push(...toChatMessages(message));
  const body: Record<string, unknown> = { model: request.model, messages };
  if (request.tools.length > 0) body.tools = request.tools.map(toFunctionTool);
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  return body;
}

function toChatMessages(message: Message): ChatMessage[] {
  if (message.role === 'assistant') {
    const text = message.content
      .filter((block): block is TextBlock => block.type === 'text')
      .map((block) => block.text)
      .join('\n');
    const calls = message.content.filter((block): block is ToolCallBlock => block.type === 'tool_call');
    // `null` content is only valid beside tool calls; some servers reject it otherwise.
    const assistant: ChatMessage = {
      role: 'assistant',
      content: text === '' && calls.length > 0 ? null : text,
    };
    if (calls.length > 0) {
      assistant.tool_calls = calls.map((call) => ({
        id: call.callId,
        type: 'function',
        // Raw unparsable arguments go back exactly as the model wrote them.
        function: {
          name: call.name,
          arguments:
            typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
        },
      }));
    }
    return [assistant];
  }
  // Tool results must directly follow the assistant message that called them, so they go first.
  const chatMessages: ChatMessage[] = [];
  const texts: string[] = [];
  for (const block of message.content) {
    if (block.type === 'tool_result') {
      chatMessages.push({ role: 'tool', tool_call_id: block.callId, content: toToolContent(block) });
    } else {
      texts.push(block.text);
    }
  }
  if (texts.length > 0) chatMessages.push({ role: 'user', content: texts.join('\n') });
  return chatMessages;
}

/** Chat completions have no error flag on a tool message; the text has to carry it. */
function toToolContent(block: { content: string; isError: boolean }): string {
  if (!block.isError || /^error\b/i.test(block.content)) return block.content;
  return `Error: ${block.content}`;
}

function toFunctionTool(tool: ToolSpecification) {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  };
}

const chatCompletionSchema = z.object({
  choices: z
    .array(
      z.object({
        finish_reason: z.nullish(z.string()),
        message: z.object({
          content: z.nullish(z.string()),
          tool_calls: z.nullish(
            z.array(
              z.object({
                id: z.string().check(z.minLength(1)),
                function: z.object({
                  name: z.string().check(z.minLength(1)),
                  arguments: z.nullish(z.string()),
                }),
              }),
            ),
          ),
        }),
      }),
    )
    .check(z.minLength(1)),
  usage: z.nullish(z.object({ prompt_tokens: z.number(), completion_tokens: z.number() })),
});

/** A chat completion body in our terms; anything that is not one is an unreadable reply. */
export function fromChatCompletionText(bodyText: string): ModelReply {
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    throw modelFailed('The model provider returned a reply that could not be read.');
  }
  const parsed = chatCompletionSchema.safeParse(json);
  if (!parsed.success) throw modelFailed('The model provider returned a reply that could not be read.');
  const [choice] = parsed.data.choices;
  if (choice === undefined) throw modelFailed('The model provider returned a reply without a choice.');
  const content: Array<TextBlock | ToolCallBlock> = [];
  if (typeof choice.message.content === 'string' && choice.message.content !== '') {
    content.push({ type: 'text', text: choice.message.content });
  }
  for (const call of choice.message.tool_calls ?? []) {
    content.push({
      type: 'tool_call',
      callId: call.id,
      name: call.function.name,
      arguments: parseArguments(call.function.arguments),
    });
  }
  const hasCalls = content.some((block) => block.type === 'tool_call');
  const reply: ModelReply = { content, stopReason: toStopReason(choice.finish_reason, hasCalls) };
  const usage = parsed.data.usage;
  if (usage) reply.usage = { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens };
  return reply;
}

function parseArguments(raw: string | null | undefined): unknown {
  // Some servers send "" for a call without arguments.
  if (raw === null || raw === undefined || raw.trim() === '') return {};
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function toStopReason(finishReason: string | null | undefined, hasCalls: boolean): ModelReply['stopReason'] {
  // Several compatible servers answer "stop" even when the message carries tool calls.
  if (hasCalls) return 'tool_use';
  switch (finishReason) {
    case 'stop':
      return 'end_turn';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    default:
      return 'other';
  }
}
