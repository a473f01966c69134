import { CountersignError } from '../../errors.js';
import { TEXTS } from '../../texts.js';
import { isLoopbackHost, isReservedHost } from './reserved-hosts.js';

/**
 * Which hosts the MCP client may reach with a configuration's bearer secret. A configuration is
 * admin-written data; the list is the operator's (the construct's `mcpAllowedHosts`), so a
 * mistaken or hostile configuration cannot point the step Lambdas at internal or metadata
 * addresses. Fails closed: an empty list reaches nothing (deployed).
 */
export interface McpHostPolicy {
  /** `host[:port]` entries as {@link normalizeMcpAllowedHost} returns them: lower case, no default port. */
  readonly allowedHosts: readonly string[];
  /**
   * Local mode only (`npm start`, tests): loopback hosts (`localhost`, 127.0.0.0/8, `[::1]`) are
   * allowed on any port, over http too. Deployed, loopback is the Lambda runtime API's address.
   */
  readonly allowLoopback: boolean;
}

/** Why a URL may not be reached; `host` is what an admin wrote, never a secret. */
export type McpUrlVerdict =
  | { kind: 'allowed' }
  | { kind: 'not-allowed'; host: string; problem: McpUrlProblem };

/** Why {@link checkMcpServerUrl} refused a URL. */
export type McpUrlProblem = 'not-a-url' | 'not-https' | 'credentials' | 'host-not-listed';

/** Deployed and nothing listed: what a policy is when none was given. */
export const NO_MCP_HOSTS: McpHostPolicy = { allowedHosts: [], allowLoopback: false };

/**
 * Checks an MCP server URL against the policy: `https:` only (loopback over http locally), no
 * user name or password in it, and its `host[:port]` on the list (exact, case-insensitive; the
 * default port 443 is the same as none).
 *
 * @example
 * checkMcpServerUrl('https://mcp.example.com/mcp', { allowedHosts: ['mcp.example.com'], allowLoopback: false });
 * // { kind: 'allowed' }
 */
export function checkMcpServerUrl(url: string, policy: McpHostPolicy): McpUrlVerdict {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { kind: 'not-allowed', host: '', problem: 'not-a-url' };
  }
  const host = parsed.host;
  if (parsed.username !== '' || parsed.password !== '')
    return { kind: 'not-allowed', host, problem: 'credentials' };
  if (policy.allowLoopback && isLoopbackHost(parsed.hostname)) {
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return { kind: 'allowed' };
  }
  if (parsed.protocol !== 'https:') return { kind: 'not-allowed', host, problem: 'not-https' };
  if (!policy.allowedHosts.includes(host)) return { kind: 'not-allowed', host, problem: 'host-not-listed' };
  return { kind: 'allowed' };
}

/**
 * One entry of the allowed hosts, normalised (`MCP.Example.com:443` → `mcp.example.com`) by the
 * WHATWG URL parser, or why it cannot be one: a scheme, a path, a wildcard, a name with an empty
 * label or a trailing dot, or a loopback, link-local or unspecified address in any spelling,
 * IPv4-embedding IPv6 forms included (`reserved-hosts.ts`: the Lambda runtime API and the
 * instance metadata service live there; no MCP server does).
 *
 * @example
 * normalizeMcpAllowedHost('MCP.example.com:8443'); // { kind: 'valid', host: 'mcp.example.com:8443' }
 */
export function normalizeMcpAllowedHost(
  entry: string,
): { kind: 'valid'; host: string } | { kind: 'invalid'; problem: string } {
  if (!/^[A-Za-z0-9.\-[\]:]{1,260}$/.test(entry))
    return { kind: 'invalid', problem: 'is not host or host:port (no scheme, path or wildcard)' };
  let parsed: URL;
  try {
    parsed = new URL(`https://${entry}`);
  } catch {
    return { kind: 'invalid', problem: 'is not a host name or address' };
  }
  if (parsed.pathname !== '/' || parsed.hostname === '')
    return { kind: 'invalid', problem: 'is not host or host:port (no scheme, path or wildcard)' };
  if (isReservedHost(parsed.hostname))
    return {
      kind: 'invalid',
      problem:
        'is a loopback, link-local or unspecified address (or an IPv6 form of one), which no MCP server of a deployment may use',
    };
  // A name is matched exactly: `example.com.` or `a..b` would never equal a URL's host, so say so now.
  if (parsed.hostname.endsWith('.') || parsed.hostname.split('.').includes(''))
    return { kind: 'invalid', problem: 'has an empty label or a trailing dot; list the name without it' };
  return { kind: 'valid', host: parsed.host };
}

/**
 * A server whose URL the policy refuses: thrown before anything is sent, the secret included.
 * Its message names the server only (its `name` is set: bundles rename classes).
 */
export class McpHostNotAllowed extends Error {
  public readonly server: string;

  public constructor(server: string) {
    super(TEXTS.mcpServerHostNotAllowed(server));
    this.name = 'McpHostNotAllowed';
    this.server = server;
  }
}

/**
 * Throws {@link McpHostNotAllowed} unless the policy allows the server's URL.
 *
 * @example
 * assertMcpServerAllowed({ name: 'tickets', url: 'http://169.254.169.254/' }, NO_MCP_HOSTS); // throws
 */
export function assertMcpServerAllowed(server: { name: string; url: string }, policy: McpHostPolicy): void {
  if (checkMcpServerUrl(server.url, policy).kind !== 'allowed') throw new McpHostNotAllowed(server.name);
}

/**
 * Refuses a configuration whose MCP servers the policy does not allow, with a 400 naming the
 * first such server's field (`body.mcpServers.0.url`) and its host: an admin learns at the PUT,
 * not from a failed run.
 *
 * @example
 * refuseDisallowedMcpServers({ mcpServers: [{ name: 'x', url: 'http://10.0.0.5/mcp' }] }, NO_MCP_HOSTS); // throws 400
 */
export function refuseDisallowedMcpServers(
  configuration: { mcpServers?: ReadonlyArray<{ url: string }> },
  policy: McpHostPolicy,
): void {
  for (const [index, server] of (configuration.mcpServers ?? []).entries()) {
    const verdict = checkMcpServerUrl(server.url, policy);
    if (verdict.kind === 'allowed') continue;
    const field = `body.mcpServers.${index}.url`;
    throw new CountersignError(
      'bad-request',
      TEXTS.mcpServerUrlRefused(field, verdict.host, verdict.problem),
      {
        field,
      },
    );
  }
}
