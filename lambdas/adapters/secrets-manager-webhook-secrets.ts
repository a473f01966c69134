import type { WebhookSecrets } from '../core/external-runs/webhook-delivery.js';

const CACHE_MILLISECONDS = 5 * 60_000;

class WebhookSecretEmpty extends Error {
  public constructor() {
    super('A webhook signing secret has no string value.');
    this.name = 'WebhookSecretEmpty';
  }
}

/**
 * Deployed: each machine client's webhook signing secret is a Secrets Manager secret, named by
 * the construct in `COUNTERSIGN_WEBHOOK_SECRETS` (client id → secret ARN). Read on first use
 * and kept five minutes per container, so a rotation reaches running Lambdas.
 *
 * @example
 * const secrets = new SecretsManagerWebhookSecrets({ 'a1b2c3': 'arn:aws:secretsmanager:…' });
 */
export class SecretsManagerWebhookSecrets implements WebhookSecrets {
  private readonly cache = new Map<string, { value: string; readAt: number }>();
  private client: import('@aws-sdk/client-secrets-manager').SecretsManagerClient | undefined;

  public constructor(private readonly secretArns: Readonly<Record<string, string>>) {}

  public async secretOf(clientId: string): Promise<string | undefined> {
    if (!Object.hasOwn(this.secretArns, clientId)) return undefined;
    const secretArn = this.secretArns[clientId];
    if (secretArn === undefined) return undefined;
    const cached = this.cache.get(secretArn);
    if (cached && Date.now() - cached.readAt < CACHE_MILLISECONDS) return cached.value;
    const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    this.client ??= new SecretsManagerClient({});
    const answer = await this.client.send(new GetSecretValueCommand({ SecretId: secretArn }));
    if (typeof answer.SecretString !== 'string' || answer.SecretString === '') throw new WebhookSecretEmpty();
    this.cache.set(secretArn, { value: answer.SecretString, readAt: Date.now() });
    return answer.SecretString;
  }
}
