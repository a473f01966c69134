import type { McpServerConfiguration } from './mcp-server-configuration.js';

/** A tool as an MCP server lists it (only what countersign reads of it). */
export interface McpToolDescriptor {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** Hints from the server: only `readOnlyHint: true` changes anything (no approval). */
  annotations?: { readOnlyHint?: boolean };
}

/** What a call returned: its text content joined, and whether the server flagged it an error. */
export interface McpCallResult {
  text: string;
  isError: boolean;
}

/**
 * Port: the MCP servers a configuration names. Every method ends within the server's
 * `timeoutMs` (an error, never a hang); errors carry no secret in their class name.
 */
export interface McpServers {
  listTools(server: McpServerConfiguration): Promise<McpToolDescriptor[]>;
  callTool(
    server: McpServerConfiguration,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<McpCallResult>;
}

/** Port: reads an MCP server's bearer secret (Secrets Manager deployed, the environment locally). */
export interface McpSecretReader {
  read(secretId: string): Promise<string>;
}
