import * as z from 'zod/mini';
import { isCountersignError } from '../../core/errors.js';
import type {
  Message,
  ModelProvider,
  ModelReply,
  ModelRequest,
  TextBlock,
  ToolCallBlock,
  ToolSpecification,
} from '../../core/model.js';
import { modelFailed } from './model-failure.js';
import {
  DEFAULT_RETRY_POLICY,
  isRetryableStatus,
  nextRetryDelay,
  parseRetryAfter,
  type RetryPolicy,
} from './retry-policy.js';

// The deployed key source lives beside the model it feeds; re-exported so wiring imports one module.
export { API_KEY_CACHE_MILLISECONDS, createSecretsManagerKeySource } from './secrets-manager-key-source.js';

/**
 * Where the bearer key comes from: Secrets Manager when deployed
 * (`createSecretsManagerKeySource`), a value the local entry point read from its environment
 * otherwise. Called once per model turn; caching is the source's business.
 */
export type ApiKeySource = () => Promise<string>;

/** A key source for a key the caller already holds (local mode). */
export function createStaticKeySource(apiKey: string): ApiKeySource {
  return async () => apiKey;
}

export interface OpenAiCompatibleModelOptions {
  /** The API root, for example `https://api.openai.com/v1`; `/chat/completions` is appended. */
  readonly baseUrl: string;
  readonly apiKey: ApiKeySource;
  /**
   * How long one call may take, body included.
   * @default 60_000
   */
  readonly timeoutMilliseconds?: number;
  /**
   * The fetch implementation (tests and proxies).
   * @default globalThis.fetch
   */
  readonly fetch?: typeof fetch;
  /**
   * Retries of HTTP 429, 5xx and unreachable endpoints (backoff with jitter, `Retry-After`
   * honoured), bounded in attempts and time.
   * @default DEFAULT_RETRY_POLICY (4 attempts within 45 s)
   */
  readonly retry?: RetryPolicy;
  /** Waits between attempts (tests pass one that does not wait). @default setTimeout */
  readonly sleep?: (milliseconds: number) => Promise<void>;
  /** @default Date.now */
  readonly now?: () => number;
  /** @default Math.random */
  readonly random?: () => number;
}

export const OPENAI_COMPATIBLE_DEFAULT_TIMEOUT_MILLISECONDS = 60_000;

/**
 * Any OpenAI-compatible `POST /chat/completions` endpoint (OpenAI, Azure OpenAI, vLLM,
 * Ollama, LiteLLM...) as a `ModelProvider`, with function tools. Tool-call arguments arrive
 * as a JSON string; when that string does not parse, the raw string is passed on as the
 * arguments so the loop's input validation refuses the call instead of this adapter guessing.
 *
 * @example
 * const model = new OpenAiCompatibleModel({
 *   baseUrl: 'https://api.openai.com/v1',
 *   apiKey: createSecretsManagerKeySource(secretsManager, secretArn),
 * });
 */
export class OpenAiCompatibleModel implements ModelProvider {
  public readonly name = 'openai-compatible';
  private readonly endpoint: string;
  private readonly timeoutMilliseconds: number;
  private readonly fetchImplementation: typeof fetch;
  private readonly retry: Required<RetryPolicy>;
  private readonly sleep: (milliseconds: number) => Promise<void>;
  private readonly now: () => number;
  private readonly random: () => number;

  public constructor(private readonly options: OpenAiCompatibleModelOptions) {
    this.endpoint = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.timeoutMilliseconds = options.timeoutMilliseconds ?? OPENAI_COMPATIBLE_DEFAULT_TIMEOUT_MILLISECONDS;
    this.fetchImplementation = options.fetch ?? globalThis.fetch;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.sleep =
      options.sleep ?? ((milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds)));
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  public async converse(request: ModelRequest): Promise<ModelReply> {
    const apiKey = await this.readApiKey();
    const body = JSON.stringify(toChatCompletionRequest(request));
    const startedAt = this.now();
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await this.attempt(apiKey, body);
      if (outcome.kind === 'answered') return fromChatCompletionText(outcome.bodyText);
      if (outcome.kind === 'failed') throw outcome.failure;
      const delay = nextRetryDelay({
        policy: this.retry,
        retry: attempt,
        elapsedMilliseconds: this.now() - startedAt,
        retryAfterMilliseconds: outcome.retryAfterMilliseconds,
        random: this.random,
      });
      if (delay === undefined) {
        const seconds = Math.round((this.now() - startedAt) / 1000);
        throw modelFailed(
          `${outcome.reason}; gave up after ${attempt} ${attempt === 1 ? 'attempt' : 'attempts'} in ${seconds} s.`,
        );
      }
      await this.sleep(delay);
    }
  }

  /** One POST: the body, a failure worth another attempt, or a final failure. */
  private async attempt(
    apiKey: string,
    body: string,
  ): Promise<
    | { kind: 'answered'; bodyText: string }
    | { kind: 'retryable'; reason: string; retryAfterMilliseconds: number | undefined }
    | { kind: 'failed'; failure: Error }
  > {
    const signal = AbortSignal.timeout(this.timeoutMilliseconds);
    try {
      const response = await this.fetchImplementation(this.endpoint, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body,
        signal,
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        if (!isRetryableStatus(response.status)) {
          return { kind: 'failed', failure: describeHttpFailure(response.status) };
        }
        return {
          kind: 'retryable',
          reason: describeTransientStatus(response.status),
          retryAfterMilliseconds: parseRetryAfter(response.headers.get('retry-after'), this.now()),
        };
      }
      return { kind: 'answered', bodyText: await response.text() };
    } catch (error) {
      if (isCountersignError(error)) return { kind: 'failed', failure: error };
      if (signal.aborted) {
        // A call that used its whole timeout is not retried: another would outlast the turn.
        const seconds = Number((this.timeoutMilliseconds / 1000).toFixed(1));
        return {
          kind: 'failed',
          failure: modelFailed(`The model provider did not answer within ${seconds} s.`),
        };
      }
      return {
        kind: 'retryable',
        reason: 'The model provider could not be reached',
        retryAfterMilliseconds: undefined,
      };
    }
  }

  private async readApiKey(): Promise<string> {
    try {
      return await this.options.apiKey();
    } catch (error) {
      if (isCountersignError(error)) throw error;
      throw modelFailed('The model provider API key could not be read.');
    }
  }
}

/** The reason of a transient refusal, completed with the attempts when they run out. */
function describeTransientStatus(status: number): string {
  if (status === 429) return 'The model provider is throttling requests (HTTP 429)';
  return `The model provider failed to answer (HTTP ${status})`;
}

function describeHttpFailure(status: number) {
  if (status === 401 || status === 403) {
    return modelFailed(`The model provider refused the API key (HTTP ${status}).`);
  }
  return modelFailed(`The model provider refused the request (HTTP ${status}).`);
}

type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** Our request as a chat completion body. Exported for tests. */
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
