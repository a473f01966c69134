import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CountersignError } from '../../core/errors.js';
import type { ApiKeySource } from './openai-compatible-model.js';

/** How long a read key is reused: rotation takes effect within this time, and a warm Lambda reads rarely. */
export const API_KEY_CACHE_MILLISECONDS = 5 * 60 * 1000;

export interface SecretsManagerKeySourceOptions {
  /** @default API_KEY_CACHE_MILLISECONDS */
  readonly cacheMilliseconds?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * An `ApiKeySource` that reads the key from a Secrets Manager secret and caches it for five
 * minutes. The secret is either the bare key or a JSON object with an `apiKey` field.
 * Concurrent callers share one read; a failed read is not cached.
 *
 * @example
 * const apiKey = createSecretsManagerKeySource(new SecretsManagerClient({}), config.modelApiKeySecretArn);
 */
export function createSecretsManagerKeySource(
  client: SecretsManagerClient,
  secretArn: string,
  options: SecretsManagerKeySourceOptions = {},
): ApiKeySource {
  const cacheMilliseconds = options.cacheMilliseconds ?? API_KEY_CACHE_MILLISECONDS;
  const now = options.now ?? Date.now;
  let cached: { value: Promise<string>; readAt: number } | undefined;

  return async () => {
    if (cached !== undefined && now() - cached.readAt < cacheMilliseconds) return cached.value;
    const entry = { value: readApiKey(client, secretArn), readAt: now() };
    cached = entry;
    entry.value.catch(() => {
      if (cached === entry) cached = undefined;
    });
    return entry.value;
  };
}

async function readApiKey(client: SecretsManagerClient, secretArn: string): Promise<string> {
  let secretString: string | undefined;
  try {
    secretString = (await client.send(new GetSecretValueCommand({ SecretId: secretArn }))).SecretString;
  } catch {
    // The SDK's message may name the account or the role; the reason here says enough.
    throw new CountersignError(
      'model-failed',
      'The model provider API key could not be read from Secrets Manager.',
    );
  }
  const apiKey = extractApiKey(secretString);
  if (apiKey === undefined) {
    throw new CountersignError(
      'configuration',
      'The model provider API key secret is empty: store the key, or JSON with an "apiKey" field.',
    );
  }
  return apiKey;
}

function extractApiKey(secretString: string | undefined): string | undefined {
  const trimmed = secretString?.trim();
  if (!trimmed) return undefined;
  if (trimmed.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      const field = (parsed as { apiKey?: unknown }).apiKey;
      return typeof field === 'string' && field.trim() !== '' ? field.trim() : undefined;
    } catch {
      return trimmed;
    }
  }
  return trimmed;
}
