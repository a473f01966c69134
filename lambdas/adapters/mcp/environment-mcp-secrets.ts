import { localSecretVariable } from '../../core/tools/mcp/mcp-server-configuration.js';
import type { McpSecretReader } from '../../core/tools/mcp/mcp-servers.js';

class McpSecretMissing extends Error {
  public constructor() {
    super('An MCP server secret is not set in the environment.');
    this.name = 'McpSecretMissing';
  }
}

/** Local mode: a server's secret is the environment variable `COUNTERSIGN_MCP_SECRET_<ID>`. */
export class EnvironmentMcpSecrets implements McpSecretReader {
  private readonly environment: Readonly<Record<string, string | undefined>>;

  public constructor(environment: Readonly<Record<string, string | undefined>> = process.env) {
    this.environment = environment;
  }

  public async read(secretId: string): Promise<string> {
    const value = this.environment[localSecretVariable(secretId)];
    if (value === undefined || value === '') throw new McpSecretMissing();
    return value;
  }
}
