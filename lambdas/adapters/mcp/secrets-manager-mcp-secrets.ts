import type { McpSecretReader } from '../../core/tools/mcp/mcp-servers.js';

class McpSecretMissing extends Error {
  public constructor() {
    super('An MCP server secret has no string value.');
    this.name = 'McpSecretMissing';
  }
}

const CACHE_MILLISECONDS = 5 * 60_000;

/**
 * Deployed: a server's secret is a Secrets Manager secret (name or ARN), read on first use
 * and kept for five minutes per container so a rotation reaches running Lambdas.
 */
export class SecretsManagerMcpSecrets implements McpSecretReader {
  private readonly cache = new Map<string, { value: string; readAt: number }>();
  private client: import('@aws-sdk/client-secrets-manager').SecretsManagerClient | undefined;

  public async read(secretId: string): Promise<string> {
    const cached = this.cache.get(secretId);
    if (cached && Date.now() - cached.readAt < CACHE_MILLISECONDS) return cached.value;
    const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    this.client ??= new SecretsManagerClient({});
    const answer = await this.client.send(new GetSecretValueCommand({ SecretId: secretId }));
    if (typeof answer.SecretString !== 'string' || answer.SecretString === '') throw new McpSecretMissing();
    this.cache.set(secretId, { value: answer.SecretString, readAt: Date.now() });
    return answer.SecretString;
  }
}
