import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** How long a read secret is reused: rotation takes effect within this time, and a warm Lambda reads rarely. */
export const SECRET_CACHE_MILLISECONDS = 5 * 60 * 1000;

export interface SecretsManagerSecretOptions {
  /** The JSON field holding the value, when the secret is a JSON object; otherwise the bare string is it. */
  readonly field: string;
  /** The error of a read that failed (the SDK's own message may name the account or the role). */
  readonly unreadable: () => Error;
  /** The error of a secret without a value. */
  readonly empty: () => Error;
  /** @default SECRET_CACHE_MILLISECONDS */
  readonly cacheMilliseconds?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * One value of a Secrets Manager secret (an API key, a Slack signing secret or bot token), read on
 * first use and cached for five minutes. The secret is the bare value or a JSON object with
 * `field`. Concurrent callers share one read; a failed read is not cached.
 *
 * @example
 * const botToken = createSecretsManagerSecret(client, arn, { field: 'botToken', unreadable, empty });
 * const token = await botToken();
 */
export function createSecretsManagerSecret(
  client: SecretsManagerClient,
  secretArn: string,
  options: SecretsManagerSecretOptions,
): () => Promise<string> {
  const cacheMilliseconds = options.cacheMilliseconds ?? SECRET_CACHE_MILLISECONDS;
  const now = options.now ?? Date.now;
  let cached: { value: Promise<string>; readAt: number } | undefined;

  return async () => {
    if (cached !== undefined && now() - cached.readAt < cacheMilliseconds) return cached.value;
    const entry = { value: readSecret(client, secretArn, options), readAt: now() };
    cached = entry;
    entry.value.catch(() => {
      if (cached === entry) cached = undefined;
    });
    return entry.value;
  };
}

async function readSecret(
  client: SecretsManagerClient,
  secretArn: string,
  options: SecretsManagerSecretOptions,
): Promise<string> {
  let secretString: string | undefined;
  try {
    secretString = (await client.send(new GetSecretValueCommand({ SecretId: secretArn }))).SecretString;
  } catch {
    throw options.unreadable();
  }
  const value = extractField(secretString, options.field);
  if (value === undefined) throw options.empty();
  return value;
}

function extractField(secretString: string | undefined, field: string): string | undefined {
  const trimmed = secretString?.trim();
  if (!trimmed) return undefined;
  if (trimmed.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      const value = (parsed as Record<string, unknown>)[field];
      return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
    } catch {
      return trimmed;
    }
  }
  return trimmed;
}
