import {
  assertMcpServerAllowed,
  checkMcpServerUrl,
  type McpHostPolicy,
} from '../../core/tools/mcp/mcp-host-policy.js';
import type { McpServerConfiguration } from '../../core/tools/mcp/mcp-server-configuration.js';
import type {
  McpCallResult,
  McpSecretReader,
  McpServers,
  McpToolDescriptor,
} from '../../core/tools/mcp/mcp-servers.js';
import { createOutboundFetch } from '../outbound/outbound-fetch.js';

/** A result the model reads is cut here: a transcript item must stay far below a DynamoDB item. */
export const MAX_MCP_RESULT_CHARACTERS = 50_000;
/** The largest HTTP answer read from an MCP server (decompressed), far above a tool list or result. */
export const MCP_RESPONSE_MAX_BYTES = 4 * 1024 * 1024;
const MAX_LISTED_TOOLS = 200;

type Client = import('@modelcontextprotocol/sdk/client/index.js').Client;

// Each error sets its `name`: a log shows only that, and bundles rename classes.
class McpTimeout extends Error {
  public constructor() {
    super('The MCP server did not answer within its timeout.');
    this.name = 'McpTimeout';
  }
}

/**
 * The MCP servers, through the official TypeScript SDK over streamable HTTP. Each operation
 * opens a session, does its one request and closes it: a step Lambda holds no connection
 * between invocations, and a server that went away is noticed on the next call. Every
 * operation, connect included, ends within the server's `timeoutMs` (one deadline aborts the
 * HTTP requests too), so an unreachable or silent server is an error, never a hang.
 *
 * Only a URL the host policy allows is reached (checked before the secret is read, for
 * configurations stored before the list changed), and no redirect is followed: a server cannot
 * send the bearer secret on to another host (`OutboundRedirectRefused`).
 *
 * The SDK is imported on first use, and deployed beside the bundle as side modules
 * (lib/side-modules.ts, `computeMcpClientSideModules`): a run that names no server never loads it.
 */
export class SdkMcpServers implements McpServers {
  private readonly secrets: McpSecretReader;
  private readonly hostPolicy: McpHostPolicy;

  /**
   * Every request of the transport (its GET stream too, which ignores `requestInit.redirect`)
   * goes through the outbound policy: no redirect is followed, not even within the origin (the
   * SDK would follow one, and the secret must reach no URL but the one checked), a URL the host
   * policy refuses is not requested, and each answer is bounded in bytes.
   */
  private readonly outboundFetch: ReturnType<typeof createOutboundFetch>;

  public constructor(options: { secrets: McpSecretReader; hostPolicy: McpHostPolicy }) {
    this.secrets = options.secrets;
    this.hostPolicy = options.hostPolicy;
    this.outboundFetch = createOutboundFetch({
      redirects: 'none',
      maxResponseBytes: MCP_RESPONSE_MAX_BYTES,
      allowsUrl: (url) => checkMcpServerUrl(url.href, this.hostPolicy).kind === 'allowed',
    });
  }

  public async listTools(server: McpServerConfiguration): Promise<McpToolDescriptor[]> {
    return this.withSession(server, async (client, options) => {
      const tools: McpToolDescriptor[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor }, options);
        for (const tool of page.tools) {
          tools.push({
            name: tool.name,
            ...(tool.description === undefined ? {} : { description: tool.description }),
            inputSchema: tool.inputSchema as Record<string, unknown>,
            ...(tool.annotations?.readOnlyHint === undefined
              ? {}
              : { annotations: { readOnlyHint: tool.annotations.readOnlyHint } }),
          });
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined && tools.length < MAX_LISTED_TOOLS);
      return tools.slice(0, MAX_LISTED_TOOLS);
    });
  }

  public async callTool(
    server: McpServerConfiguration,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<McpCallResult> {
    return this.withSession(server, async (client, options) => {
      const result = (await client.callTool({ name: tool, arguments: args }, undefined, options)) as {
        content?: unknown;
        structuredContent?: unknown;
        isError?: unknown;
      };
      return { text: resultText(result), isError: result.isError === true };
    });
  }

  private async withSession<Result>(
    server: McpServerConfiguration,
    operation: (client: Client, options: { timeout: number; signal: AbortSignal }) => Promise<Result>,
  ): Promise<Result> {
    assertMcpServerAllowed(server, this.hostPolicy);
    const deadline = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        deadline.abort(new McpTimeout());
        reject(new McpTimeout());
      }, server.timeoutMs);
    });
    let client: Client | undefined;
    const session = (async () => {
      const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
        import('@modelcontextprotocol/sdk/client/index.js'),
        import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      ]);
      const headers: Record<string, string> = {};
      if (server.authSecret !== undefined) {
        headers.authorization = `Bearer ${await this.secrets.read(server.authSecret)}`;
      }
      const transport = new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers, signal: deadline.signal, redirect: 'manual' },
        fetch: this.outboundFetch,
        // One attempt per operation: the deadline, not a reconnection loop, bounds it.
        reconnectionOptions: {
          maxRetries: 0,
          initialReconnectionDelay: 1000,
          maxReconnectionDelay: 1000,
          reconnectionDelayGrowFactor: 1,
        },
      });
      client = new Client({ name: 'countersign', version: '1' });
      const options = { timeout: server.timeoutMs, signal: deadline.signal };
      await client.connect(transport, options);
      return operation(client, options);
    })();
    session.catch(() => undefined); // its rejection is reported by the race below
    try {
      return await Promise.race([session, timedOut]);
    } finally {
      clearTimeout(timer);
      deadline.abort();
      await client?.close().catch(() => undefined);
    }
  }
}

function resultText(result: { content?: unknown; structuredContent?: unknown }): string {
  const blocks = Array.isArray(result.content)
    ? (result.content as Array<{ type?: string; text?: string }>)
    : [];
  const parts = blocks.map((block) =>
    block.type === 'text' && typeof block.text === 'string'
      ? block.text
      : `[${String(block.type)} content left out]`,
  );
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join('\n');
  return text.length > MAX_MCP_RESULT_CHARACTERS
    ? `${text.slice(0, MAX_MCP_RESULT_CHARACTERS)}\n[cut at ${MAX_MCP_RESULT_CHARACTERS} characters]`
    : text;
}
