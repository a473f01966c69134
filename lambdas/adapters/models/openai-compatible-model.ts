import { isCountersignError } from '../../core/errors.js';
import type { ModelProvider, ModelReply, ModelRequest } from '../../core/model.js';
import { modelFailed } from './model-failure.js';
import { fromChatCompletionText, toChatCompletionRequest } from './openai-chat-completion.js';
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
    // The lookbehind keeps the match linear: a run of slashes is tried from its first one only.
    this.endpoint = `${options.baseUrl.replace(/(?<!\/)\/+$/, '')}/chat/completions`;
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
