import type { IConstruct } from 'constructs';
import { normalizeMcpAllowedHost } from '../lambdas/core/tools/mcp/mcp-host-policy.js';
import type { HandlerName } from './handler-names.js';
import { invalidProp } from './validation-error.js';

/** The run steps that list and call MCP tools: they connect, with the servers' secrets. */
export const MCP_CONNECTING_HANDLERS = [
  'model-turn',
  'await-approval',
  'execute-tools',
] as const satisfies readonly HandlerName[];

/**
 * The functions that check MCP server URLs: the run steps that connect (with the secret) and
 * api-admin, which refuses a configuration naming another host. No other function reads it.
 */
export const MCP_HOST_CHECKING_HANDLERS = [
  ...MCP_CONNECTING_HANDLERS,
  'api-admin',
] as const satisfies readonly HandlerName[];

/**
 * `mcpAllowedHosts`, each entry normalised (`MCP.example.com:443` → `mcp.example.com`) by the same
 * rule the Lambdas read it with, so a bad entry fails `cdk synth` with the value and the fix
 * instead of a cold start.
 *
 * @example
 * resolveMcpAllowedHosts(this, ['mcp.tickets.example.com']); // ['mcp.tickets.example.com']
 */
export function resolveMcpAllowedHosts(scope: IConstruct, hosts: readonly string[] | undefined): string[] {
  const resolved: string[] = [];
  for (const entry of hosts ?? []) {
    const normalized = normalizeMcpAllowedHost(typeof entry === 'string' ? entry : String(entry));
    if (normalized.kind === 'invalid') {
      throw invalidProp(
        scope,
        `mcpAllowedHosts entry ${JSON.stringify(entry)} ${normalized.problem}; list each MCP server's host or host:port, e.g. 'mcp.tickets.example.com' or 'mcp.internal.example.com:8443'.`,
      );
    }
    if (!resolved.includes(normalized.host)) resolved.push(normalized.host);
  }
  return resolved;
}
