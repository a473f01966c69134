import { SdkMcpServers } from '../../adapters/mcp/sdk-mcp-servers.js';
import { SecretsManagerMcpSecrets } from '../../adapters/mcp/secrets-manager-mcp-secrets.js';
import type { McpServers } from '../../core/tools/mcp/mcp-servers.js';
import { lambdaMcpHostPolicy } from '../config.js';

let servers: McpServers | undefined;

/** The MCP client of the run steps (model turn, pause, execution); its secrets from Secrets Manager. */
export function awsMcp(): McpServers {
  servers ??= new SdkMcpServers({
    secrets: new SecretsManagerMcpSecrets(),
    hostPolicy: lambdaMcpHostPolicy(),
  });
  return servers;
}
