import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CountersignError } from '../../core/errors.js';
import { createSecretsManagerSecret, SECRET_CACHE_MILLISECONDS } from '../secrets-manager-secret.js';
import type { ApiKeySource } from './openai-compatible-model.js';

/** How long a read key is reused: rotation takes effect within this time, and a warm Lambda reads rarely. */
export const API_KEY_CACHE_MILLISECONDS = SECRET_CACHE_MILLISECONDS;

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
  return createSecretsManagerSecret(client, secretArn, {
    field: 'apiKey',
    // The SDK's message may name the account or the role; the reason here says enough.
    unreadable: () =>
      new CountersignError(
        'model-failed',
        'The model provider API key could not be read from Secrets Manager.',
      ),
    empty: () =>
      new CountersignError(
        'configuration',
        'The model provider API key secret is empty: store the key, or JSON with an "apiKey" field.',
      ),
    ...options,
  });
}
