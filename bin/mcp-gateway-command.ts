// `countersign mcp-gateway`: the MCP approval gateway as a command (docs/external-agents.md).
import { parseArgs } from 'node:util';
import type { McpGatewayOptions } from '../lambdas/agents/mcp-gateway/mcp-gateway-server.js';

/** The environment variable the machine client's secret is read from (never an argument: `ps` shows those). */
export const CLIENT_SECRET_VARIABLE = 'COUNTERSIGN_CLIENT_SECRET';
/** The environment variable the upstream's bearer token is read from, if it wants one. */
export const UPSTREAM_TOKEN_VARIABLE = 'COUNTERSIGN_UPSTREAM_TOKEN';
/** The environment variable the token MCP clients must present is read from (required off loopback). */
export const GATEWAY_TOKEN_VARIABLE = 'COUNTERSIGN_GATEWAY_TOKEN';

export const MCP_GATEWAY_USAGE = `Usage: countersign mcp-gateway --upstream <url> --api <url> --token-url <url> --client-id <id> --configuration <id> [options]

Serves an MCP endpoint (streamable HTTP) that offers the upstream MCP server's tools: a tool the
upstream marks readOnlyHint passes through; every other call waits for a person to countersign it.
The machine client's secret is read from ${CLIENT_SECRET_VARIABLE}, the upstream's bearer token (if
any) from ${UPSTREAM_TOKEN_VARIABLE}, and the bearer token MCP clients must send from
${GATEWAY_TOKEN_VARIABLE} (required with a --host that is not loopback; at least 32 characters).

  --host <address>              listen on this address (default 127.0.0.1)
  --allowed-host <host:port>    another Host header to accept (repeatable), for a non-loopback --host
  --port <port>                 listen on this port (default 8788)
  --inbox-url <url>             where approvers open a card (default: the API's URL)
  --wait-seconds <n>            how long a call waits for a decision (default 45)
  --poll-seconds <n>            progress goes out this often while a call waits (default 15, at most 25)
  --max-waiting-calls <n>       calls waiting at once (default 16)
  --max-argument-bytes <n>      the largest arguments of a call, as JSON (default 65536)
  --allow-edits                 approvers may edit a call's arguments before approving it
  --allow-loopback-upstream     local development: the upstream may be on 127.0.0.1 or localhost`;

/** What `countersign mcp-gateway` needs of its process. */
export interface McpGatewayCommandIo {
  readonly environment: Readonly<Record<string, string | undefined>>;
  /** Resolves when the process is asked to stop (SIGINT, SIGTERM). */
  readonly untilStopped: () => Promise<void>;
  readonly print: (line: string) => void;
  readonly printError: (line: string) => void;
}

/**
 * Starts the gateway with the command's arguments and serves until the process is asked to stop.
 * Returns the exit status: 0 after a stop, 2 when it could not start (the reason is printed).
 */
export async function runMcpGatewayCommand(
  args: readonly string[],
  io: McpGatewayCommandIo,
): Promise<number> {
  let options: McpGatewayOptions | 'help';
  try {
    options = readGatewayOptions(args, io.environment);
  } catch (error) {
    io.printError(error instanceof Error ? error.message : String(error));
    io.printError(MCP_GATEWAY_USAGE);
    return 2;
  }
  if (options === 'help') {
    io.print(MCP_GATEWAY_USAGE);
    return 0;
  }
  const { startMcpGateway } = await import('../lambdas/agents/mcp-gateway/mcp-gateway-server.js');
  let gateway: Awaited<ReturnType<typeof startMcpGateway>>;
  try {
    gateway = await startMcpGateway(options);
  } catch (error) {
    io.printError(
      `The MCP gateway could not start: ${error instanceof Error ? error.message : String(error)}`,
    );
    return 2;
  }
  io.print(
    `MCP approval gateway: ${gateway.url} (upstream ${new URL(options.upstreamUrl).origin}, configuration ${options.configurationId}).`,
  );
  await io.untilStopped();
  await gateway.stop();
  return 0;
}

function readGatewayOptions(
  args: readonly string[],
  environment: Readonly<Record<string, string | undefined>>,
): McpGatewayOptions | 'help' {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      upstream: { type: 'string' },
      api: { type: 'string' },
      'token-url': { type: 'string' },
      'client-id': { type: 'string' },
      configuration: { type: 'string' },
      'inbox-url': { type: 'string' },
      host: { type: 'string' },
      'allowed-host': { type: 'string', multiple: true },
      port: { type: 'string' },
      'wait-seconds': { type: 'string' },
      'poll-seconds': { type: 'string' },
      'max-waiting-calls': { type: 'string' },
      'max-argument-bytes': { type: 'string' },
      'allow-loopback-upstream': { type: 'boolean' },
      'allow-edits': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  if (positionals.length > 0) throw new Error(`Unexpected argument "${positionals[0]}".`);
  const required = (name: 'upstream' | 'api' | 'token-url' | 'client-id' | 'configuration'): string => {
    const value = values[name];
    if (value === undefined || value === '') throw new Error(`Give --${name}.`);
    return value;
  };
  const clientSecret = environment[CLIENT_SECRET_VARIABLE];
  if (clientSecret === undefined || clientSecret === '') {
    throw new Error(`Set ${CLIENT_SECRET_VARIABLE} to the machine client's secret.`);
  }
  const upstreamToken = environment[UPSTREAM_TOKEN_VARIABLE];
  const clientToken = environment[GATEWAY_TOKEN_VARIABLE];
  const number = (name: keyof typeof values): number | undefined => {
    const value = values[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !/^\d{1,9}$/.test(value))
      throw new Error(`--${name}: a whole number, not "${value}".`);
    return Number(value);
  };
  const optional = <Key extends keyof McpGatewayOptions>(
    key: Key,
    value: McpGatewayOptions[Key] | undefined,
  ) => (value === undefined ? {} : { [key]: value });
  return {
    upstreamUrl: required('upstream'),
    apiUrl: required('api'),
    tokenUrl: required('token-url'),
    clientId: required('client-id'),
    configurationId: required('configuration'),
    clientSecret,
    port: number('port') ?? 8788,
    ...optional('upstreamToken', upstreamToken === '' ? undefined : upstreamToken),
    ...optional('clientToken', clientToken === '' ? undefined : clientToken),
    ...optional('inboxUrl', values['inbox-url']),
    ...optional('host', values.host),
    ...optional('allowedHosts', values['allowed-host']),
    ...optional('waitSeconds', number('wait-seconds')),
    ...optional('pollSeconds', number('poll-seconds')),
    ...optional('maxWaitingCalls', number('max-waiting-calls')),
    ...optional('maxArgumentBytes', number('max-argument-bytes')),
    ...optional('allowLoopbackUpstream', values['allow-loopback-upstream']),
    ...optional('allowEdits', values['allow-edits']),
  };
}
