import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { SdkMcpServers } from '../../adapters/mcp/sdk-mcp-servers.js';
import { createApiClient } from '../../contract/api-client.js';
import { CountersignError } from '../../core/errors.js';
import { TEXTS } from '../../core/texts.js';
import { checkMcpServerUrl, normalizeMcpAllowedHost } from '../../core/tools/mcp/mcp-host-policy.js';
import type { McpServerConfiguration } from '../../core/tools/mcp/mcp-server-configuration.js';
import { isLoopbackHost } from '../../core/tools/mcp/reserved-hosts.js';
import { clientCredentialsTokens } from '../client-credentials.js';
import { APPROVAL_STATUS_TOOL, APPROVAL_STATUS_TOOL_LISTING, readApprovalStatus } from './approval-status.js';
import { callThroughGateway, type GatewayCallDependencies } from './gateway-call.js';
import { GatewayCallLedger } from './gateway-call-ledger.js';
import { serveStatelessMcpRequest } from './stateless-mcp-request.js';
import { offerUpstreamTools } from './upstream-tools.js';

export interface McpGatewayOptions {
  /** The upstream MCP server's streamable HTTP endpoint: https, to a host that is not reserved. */
  readonly upstreamUrl: string;
  /** The upstream's bearer token, if it wants one. @default - none */
  readonly upstreamToken?: string;
  /** Local development: let the upstream be a loopback URL, over http too. @default false */
  readonly allowLoopbackUpstream?: boolean;
  /** Each upstream operation (connect, list, call) ends within this. @default 10000 */
  readonly upstreamTimeoutMs?: number;
  /** countersign's API base URL: https, or http on a loopback host (`npm start`). */
  readonly apiUrl: string;
  /** Where an approver reads the card (`/inbox/runs/{id}`). @default - the API's URL */
  readonly inboxUrl?: string;
  /** The machine client's token endpoint, id and secret (docs/external-agents.md). */
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The configuration the gateway submits every write under. */
  readonly configurationId: string;
  /**
   * The bearer token every MCP client must send (`Authorization: Bearer …`), at least 32
   * characters. Required when `host` is not loopback: the gateway reads the upstream with its own
   * credentials and files cards in its client's name, so the network must not reach it unasked.
   * @default - none (loopback only)
   */
  readonly clientToken?: string;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** @default 0 (any free port) */
  readonly port?: number;
  /**
   * Further `Host` header values a request may carry (`gateway.internal:8788`), for a gateway on a
   * non-loopback address; any other is refused (403), so a page on a rebound name cannot call it.
   * @default - the listening address and port, and `localhost:<port>` on loopback
   */
  readonly allowedHosts?: readonly string[];
  /** How long a call waits for a decision before it answers "waiting for approval". @default 45 */
  readonly waitSeconds?: number;
  /** The longest long poll, after which progress goes out (1–25). @default 15 */
  readonly pollSeconds?: number;
  /** The most calls waiting for a decision at once. @default 16 */
  readonly maxWaitingCalls?: number;
  /** The largest arguments of one call, as JSON. @default 65536 */
  readonly maxArgumentBytes?: number;
  /**
   * Let approvers edit a call's arguments before they approve it; the upstream then runs theirs
   * and the result says so. @default false
   */
  readonly allowEdits?: boolean;
  /** The largest HTTP request body. @default 1048576 */
  readonly maxRequestBytes?: number;
  /** @default globalThis.fetch, for the API and the token endpoint */
  readonly fetch?: typeof fetch;
}

export interface McpGateway {
  /** The MCP endpoint to give a client: `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  stop(): Promise<void>;
}

/** The path the gateway serves MCP on. */
export const MCP_GATEWAY_PATH = '/mcp';

/**
 * Starts the MCP approval gateway (docs/external-agents.md#mcp-approval-gateway): an MCP server
 * over streamable HTTP (the official SDK, stateless) that offers the upstream's tools under
 * their names. A read-only tool passes through; any other call becomes an external run's turn
 * and runs on the upstream only once a person approved it.
 *
 * @example
 * const gateway = await startMcpGateway({ upstreamUrl, apiUrl, tokenUrl, clientId, clientSecret, configurationId: 'ide-agent', port: 8788 });
 * console.log(`MCP endpoint: ${gateway.url}`);
 */
export async function startMcpGateway(options: McpGatewayOptions): Promise<McpGateway> {
  const dependencies = createGatewayDependencies(options);
  const maxRequestBytes = options.maxRequestBytes ?? 1024 * 1024;
  const host = options.host ?? '127.0.0.1';
  const clientTokenDigest = checkedClientTokenDigest(options.clientToken, host);
  let allowedHosts: readonly string[] = [];
  const server = createServer((request, response) => {
    const context = { dependencies, maxRequestBytes, allowedHosts, clientTokenDigest };
    void serveRequest(request, response, context).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  // A browser page on another site must not reach the gateway by a name rebound to 127.0.0.1.
  allowedHosts = [
    authority,
    ...(isLoopbackHost(host) ? [`localhost:${port}`] : []),
    ...(options.allowedHosts ?? []).map((entry) => entry.toLowerCase()),
  ];
  return {
    url: `http://${authority}${MCP_GATEWAY_PATH}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function createGatewayDependencies(options: McpGatewayOptions): GatewayCallDependencies {
  const upstream = new URL(checkedUpstreamUrl(options));
  checkApiUrl(options.apiUrl, 'the API URL');
  const server: McpServerConfiguration = {
    name: 'upstream',
    url: upstream.href,
    ...(options.upstreamToken ? { authSecret: 'upstream' } : {}),
    timeoutMs: options.upstreamTimeoutMs ?? 10_000,
    approversMayReadPreviews: false,
  };
  const token = options.upstreamToken;
  const upstreamServers = new SdkMcpServers({
    secrets: { read: async () => token ?? '' },
    hostPolicy: { allowedHosts: [upstream.host], allowLoopback: options.allowLoopbackUpstream === true },
  });
  const apiUrl = options.apiUrl.replace(/(?<!\/)\/+$/, '');
  const api = createApiClient({
    baseUrl: apiUrl,
    token: clientCredentialsTokens({
      tokenUrl: options.tokenUrl,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    }),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return {
    api,
    upstream: upstreamServers,
    server,
    ledger: new GatewayCallLedger(positive(options.maxWaitingCalls ?? 16, 'maxWaitingCalls')),
    now: Date.now,
    settings: {
      configurationId: options.configurationId,
      inboxUrl: (options.inboxUrl ?? apiUrl).replace(/(?<!\/)\/+$/, ''),
      waitMs: positive(options.waitSeconds ?? 45, 'waitSeconds') * 1000,
      pollSeconds: Math.min(25, positive(options.pollSeconds ?? 15, 'pollSeconds')),
      maxArgumentBytes: positive(options.maxArgumentBytes ?? 64 * 1024, 'maxArgumentBytes'),
      allowEdits: options.allowEdits === true,
    },
  };
}

/**
 * The upstream URL through the host rules of MCP servers (mcp-host-policy.ts, reserved-hosts.ts):
 * https to a host that is not loopback, link-local or unspecified in any spelling; loopback only
 * when the operator allowed it for local development.
 */
function checkedUpstreamUrl(options: McpGatewayOptions): string {
  const allowLoopback = options.allowLoopbackUpstream === true;
  let parsed: URL;
  try {
    parsed = new URL(options.upstreamUrl);
  } catch {
    throw new CountersignError('bad-request', 'upstream: not a URL.');
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new CountersignError(
      'bad-request',
      'upstream: must not carry a user name or password; give a bearer token.',
    );
  }
  if (!(allowLoopback && isLoopbackHost(parsed.hostname))) {
    const host = normalizeMcpAllowedHost(parsed.host);
    if (host.kind === 'invalid') {
      throw new CountersignError(
        'bad-request',
        `upstream: ${parsed.host} ${host.problem}${isLoopbackHost(parsed.hostname) ? ' (for local development, allow a loopback upstream)' : ''}.`,
      );
    }
  }
  const verdict = checkMcpServerUrl(parsed.href, { allowedHosts: [parsed.host], allowLoopback });
  if (verdict.kind === 'not-allowed') {
    throw new CountersignError(
      'bad-request',
      TEXTS.mcpServerUrlRefused('upstream', verdict.host, verdict.problem),
    );
  }
  return parsed.href;
}

function checkApiUrl(url: string, what: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CountersignError('bad-request', `${what}: not a URL.`);
  }
  const loopbackHttp = parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname);
  if (parsed.protocol !== 'https:' && !loopbackHttp) {
    throw new CountersignError('bad-request', `${what}: must be https (http only on a loopback host).`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new CountersignError('bad-request', `${what}: must not carry a user name or password.`);
  }
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new CountersignError('bad-request', `${name}: must be a positive number, not ${value}.`);
  }
  return value;
}

async function serveRequest(
  request: IncomingMessage,
  response: ServerResponse,
  context: {
    dependencies: GatewayCallDependencies;
    maxRequestBytes: number;
    allowedHosts: readonly string[];
    clientTokenDigest: Buffer | undefined;
  },
): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://gateway').pathname;
  if (path !== MCP_GATEWAY_PATH)
    return answerError(response, 404, ErrorCode.InvalidRequest, 'Not found: use /mcp.');
  if (!context.allowedHosts.includes((request.headers.host ?? '').toLowerCase())) {
    return answerError(response, 403, ErrorCode.InvalidRequest, 'Host not allowed.');
  }
  if (context.clientTokenDigest && !presentsToken(request, context.clientTokenDigest)) {
    response.setHeader('www-authenticate', 'Bearer');
    return answerError(response, 401, ErrorCode.InvalidRequest, 'Send the gateway token as a bearer token.');
  }
  let body: unknown;
  if (request.method === 'POST') {
    const text = await readBoundedBody(request, context.maxRequestBytes);
    if (text === undefined) {
      return answerError(
        response,
        413,
        ErrorCode.InvalidRequest,
        `The request body is larger than ${context.maxRequestBytes} bytes.`,
      );
    }
    try {
      body = JSON.parse(text);
    } catch {
      return answerError(response, 400, ErrorCode.ParseError, 'The request body is not JSON.');
    }
  }
  await serveStatelessMcpRequest(createGatewayServer(context.dependencies), request, response, body);
}

/** One SDK server per request (stateless): it lists and calls through the shared dependencies. */
function createGatewayServer(dependencies: GatewayCallDependencies): Server {
  const mcp = new Server({ name: 'countersign-mcp-gateway', version: '1' }, { capabilities: { tools: {} } });
  mcp.setRequestHandler(ListToolsRequestSchema, async () => {
    let listed: Awaited<ReturnType<GatewayCallDependencies['upstream']['listTools']>>;
    try {
      listed = await dependencies.upstream.listTools(dependencies.server);
    } catch {
      throw new McpError(ErrorCode.InternalError, TEXTS.mcpGatewayListingFailed);
    }
    return {
      tools: [
        ...offerUpstreamTools(listed).map((tool) => ({
          name: tool.name,
          ...(tool.description === undefined ? {} : { description: tool.description }),
          inputSchema: tool.inputSchema as { type: 'object' },
          ...(tool.effect === 'read' ? { annotations: { readOnlyHint: true } } : {}),
        })),
        APPROVAL_STATUS_TOOL_LISTING,
      ],
    };
  });
  mcp.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const progressToken = request.params._meta?.progressToken;
    let step = 0;
    const progress =
      progressToken === undefined
        ? undefined
        : async (message: string) => {
            step += 1;
            await extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress: step, message },
              })
              .catch(() => undefined);
          };
    if (request.params.name === APPROVAL_STATUS_TOOL) {
      return readApprovalStatus(dependencies, request.params.arguments ?? {});
    }
    return callThroughGateway(
      dependencies,
      { tool: request.params.name, arguments: request.params.arguments ?? {} },
      { ...(progress ? { progress } : {}), signal: extra.signal },
    );
  });
  return mcp;
}

/** The body as text, or `undefined` once it passes `limit` bytes (the rest is not read). */
async function readBoundedBody(request: IncomingMessage, limit: number): Promise<string | undefined> {
  const declared = Number(request.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) return undefined;
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request) {
    length += (chunk as Buffer).byteLength;
    if (length > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The client token's SHA-256, compared in constant time; refuses a network gateway without one. */
function checkedClientTokenDigest(token: string | undefined, host: string): Buffer | undefined {
  if (token === undefined) {
    if (isLoopbackHost(host)) return undefined;
    throw new CountersignError(
      'bad-request',
      `A gateway on ${host} needs a client token: MCP clients on the network must authenticate.`,
    );
  }
  if (token.length < 32 || !/^[\x21-\x7e]+$/.test(token)) {
    throw new CountersignError(
      'bad-request',
      'The client token must be at least 32 printable ASCII characters.',
    );
  }
  return createHash('sha256').update(token).digest();
}

function presentsToken(request: IncomingMessage, expected: Buffer): boolean {
  const header = request.headers.authorization ?? '';
  const scheme = header.slice(0, 7).toLowerCase();
  if (scheme !== 'bearer ') return false;
  const presented = createHash('sha256').update(header.slice(7).trim()).digest();
  return timingSafeEqual(presented, expected);
}

function answerError(response: ServerResponse, status: number, code: number, message: string): void {
  response
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
