import { setTimeout as wait } from 'node:timers/promises';
import { isCountersignError } from '../../core/errors.js';
import type {
  ModelAttempts,
  ModelCallOptions,
  ModelProvider,
  ModelReply,
  ModelRequest,
} from '../../core/model.js';
import { callOutbound, type OutboundPolicy } from '../outbound/outbound-fetch.js';
import { modelFailed, modelUnavailable } from './model-failure.js';
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
  /**
   * Waits between attempts, ending early (rejecting) when `signal` aborts (tests pass one that
   * does not wait). @default node:timers/promises setTimeout
   */
  readonly sleep?: (milliseconds: number, signal?: AbortSignal) => Promise<void>;
  /** @default Date.now */
  readonly now?: () => number;
  /** @default Math.random */
  readonly random?: () => number;
}

export const OPENAI_COMPATIBLE_DEFAULT_TIMEOUT_MILLISECONDS = 60_000;

/**
 * The largest reply read from a provider: far above any `maxTokens` a configuration allows in
 * JSON, far below a Lambda's memory, and a completion that big is refused before it could
 * pass Lambda's 6 MB response limit (generate-text.ts bounds what it returns).
 */
export const MODEL_RESPONSE_MAX_BYTES = 4 * 1024 * 1024;

/** Chat completions: a redirect only within the provider's origin (the key and prompt go nowhere else). */
const MODEL_OUTBOUND_POLICY: OutboundPolicy = {
  redirects: 'same-origin',
  maxResponseBytes: MODEL_RESPONSE_MAX_BYTES,
};

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
  private readonly sleep: (milliseconds: number, signal?: AbortSignal) => Promise<void>;
  private readonly now: () => number;
  private readonly random: () => number;

  public constructor(private readonly options: OpenAiCompatibleModelOptions) {
    // The lookbehind keeps the match linear: a run of slashes is tried from its first one only.
    this.endpoint = `${options.baseUrl.replace(/(?<!\/)\/+$/, '')}/chat/completions`;
    this.timeoutMilliseconds = options.timeoutMilliseconds ?? OPENAI_COMPATIBLE_DEFAULT_TIMEOUT_MILLISECONDS;
    this.fetchImplementation = options.fetch ?? globalThis.fetch;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.sleep = options.sleep ?? ((milliseconds, signal) => wait(milliseconds, undefined, { signal }));
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  /**
   * One call, retried within the policy; `options.signal` (the caller's deadline) ends it
   * wherever it is, in an attempt or between two, and no attempt starts after it.
   */
  public async converse(request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelReply> {
    const apiKey = await this.readApiKey();
    const body = JSON.stringify(toChatCompletionRequest(request));
    const startedAt = this.now();
    let throttled = 0;
    for (let attempt = 1; ; attempt += 1) {
      if (options.signal?.aborted) throw callerGaveUp();
      const outcome = await this.attempt(apiKey, body, options.signal);
      const attempts = { total: attempt, throttled };
      if (outcome.kind === 'answered') return { ...fromChatCompletionText(outcome.bodyText), attempts };
      if (outcome.kind === 'failed') throw outcome.describe(attempts);
      if (outcome.throttled) throttled += 1;
      const delay = nextRetryDelay({
        policy: this.retry,
        retry: attempt,
        elapsedMilliseconds: this.now() - startedAt,
        retryAfterMilliseconds: outcome.retryAfterMilliseconds,
        random: this.random,
      });
      if (delay === undefined) {
        const seconds = Math.round((this.now() - startedAt) / 1000);
        throw modelUnavailable(
          `${outcome.reason}; gave up after ${attempt} ${attempt === 1 ? 'attempt' : 'attempts'} in ${seconds} s.`,
          { total: attempt, throttled },
        );
      }
      try {
        await this.sleep(delay, options.signal);
      } catch {
        throw callerGaveUp();
      }
    }
  }

  /** One POST: the body, a failure worth another attempt, or a final failure. */
  private async attempt(
    apiKey: string,
    body: string,
    callerSignal: AbortSignal | undefined,
  ): Promise<
    | { kind: 'answered'; bodyText: string }
    | {
        kind: 'retryable';
        reason: string;
        throttled: boolean;
        retryAfterMilliseconds: number | undefined;
      }
    | { kind: 'failed'; describe: (attempts: ModelAttempts) => Error }
  > {
    const timeout = AbortSignal.timeout(this.timeoutMilliseconds);
    const answer = await callOutbound(
      {
        url: this.endpoint,
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body,
        signal: callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout,
      },
      MODEL_OUTBOUND_POLICY,
      { fetch: this.fetchImplementation },
    );
    if (answer.kind === 'refused') {
      switch (answer.reason) {
        case 'unreachable':
          return {
            kind: 'retryable',
            reason: 'The model provider could not be reached',
            throttled: false,
            retryAfterMilliseconds: undefined,
          };
        case 'timed-out': {
          // A call that used its whole timeout is not retried (another would outlast the turn),
          // but a later one may be answered: the run can be redriven.
          const seconds = Number((this.timeoutMilliseconds / 1000).toFixed(1));
          return {
            kind: 'failed',
            describe: (attempts) =>
              modelUnavailable(`The model provider did not answer within ${seconds} s.`, attempts),
          };
        }
        case 'cancelled':
          return { kind: 'failed', describe: () => callerGaveUp() };
        case 'too-large':
          return {
            kind: 'failed',
            describe: (attempts) =>
              modelFailed(
                `The model provider's reply exceeds ${MODEL_RESPONSE_MAX_BYTES / (1024 * 1024)} MiB; it was not read.`,
                attempts,
              ),
          };
        default:
          return {
            kind: 'failed',
            describe: (attempts) =>
              modelFailed(
                'The model provider answered with a redirect to another origin; it was not followed.',
                attempts,
              ),
          };
      }
    }
    const bodyText = new TextDecoder().decode(answer.body);
    if (answer.status >= 200 && answer.status <= 299) return { kind: 'answered', bodyText };
    if (!isRetryableStatus(answer.status)) {
      return { kind: 'failed', describe: (attempts) => classifyHttpFailure(answer.status, attempts) };
    }
    return {
      kind: 'retryable',
      reason: formatTransientStatus(answer.status),
      throttled: answer.status === 429,
      retryAfterMilliseconds: parseRetryAfter(answer.headers.get('retry-after'), this.now()),
    };
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

/** The caller's deadline passed or its request ended: nothing more is sent, and nobody reads why. */
function callerGaveUp() {
  return modelFailed('The model call was ended by its caller.');
}

/** The reason of a transient refusal, completed with the attempts when they run out. */
function formatTransientStatus(status: number): string {
  if (status === 429) return 'The model provider is throttling requests (HTTP 429)';
  return `The model provider failed to answer (HTTP ${status})`;
}

function classifyHttpFailure(status: number, attempts: ModelAttempts) {
  if (status === 401 || status === 403) {
    return modelFailed(`The model provider refused the API key (HTTP ${status}).`, attempts);
  }
  return modelFailed(`The model provider refused the request (HTTP ${status}).`, attempts);
}
