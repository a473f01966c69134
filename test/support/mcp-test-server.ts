import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';

/** The token the test server accepts; the runtime reads it from the environment. */
export const MCP_TEST_TOKEN = 'mcp-test-token-7f3a';
/** Text a failing tool throws: it must reach no log line. */
export const MCP_SECRET_ERROR_TEXT = 'backend password hunter2 rejected';

export interface McpTestServer {
  url: string;
  /** Every tool call the server received, in order (previews included). */
  calls: Array<{ tool: string; arguments: unknown }>;
  /** Tool lists the server answered. */
  listings: number;
  /** Stops answering and drops open connections: the server "disappears". */
  stop(): Promise<void>;
}

/**
 * A real MCP server (the official SDK, streamable HTTP, stateless) on 127.0.0.1 with:
 * `lookup` (read-only), `create_ticket` (says `destructiveHint: false`, not read-only) with a
 * read-only `create_ticket__preview`, `delete_ticket` (no annotations, no preview) and
 * `explode` (read-only, throws). Requests without the bearer token get 401.
 */
export async function startMcpTestServer(): Promise<McpTestServer> {
  const calls: McpTestServer['calls'] = [];
  const state = { listings: 0 };
  const server: Server = createServer(async (request, response) => {
    if (request.headers.authorization !== `Bearer ${MCP_TEST_TOKEN}`) {
      response.writeHead(401).end();
      return;
    }
    const body = request.method === 'POST' ? JSON.parse(await readBody(request)) : undefined;
    if (body?.method === 'tools/list') state.listings += 1;
    if (body?.method === 'tools/call')
      calls.push({ tool: body.params.name, arguments: body.params.arguments });
    const mcp = createMcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(request, response, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    get listings() {
      return state.listings;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function createMcpServer(): McpServer {
  const mcp = new McpServer({ name: 'tickets', version: '1.0.0' });
  mcp.registerTool(
    'lookup',
    {
      description: 'Looks a ticket up.',
      inputSchema: { ticket: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ ticket }) => ({ content: [{ type: 'text', text: `Ticket ${ticket}: open, assigned to Ana.` }] }),
  );
  mcp.registerTool(
    'create_ticket',
    {
      description: 'Creates a ticket.',
      inputSchema: { title: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async ({ title }) => ({ content: [{ type: 'text', text: `Created ticket T-9 "${title}".` }] }),
  );
  mcp.registerTool(
    'create_ticket__preview',
    {
      description: 'What create_ticket would do.',
      inputSchema: { title: z.string() },
      annotations: { readOnlyHint: true },
    },
    // A zero-width space in the title: the card must mark it, as for every preview.
    async ({ title }) => ({
      content: [{ type: 'text', text: `Would create a ticket in queue OPS.\nTitle: "${title}"` }],
    }),
  );
  mcp.registerTool(
    'delete_ticket',
    { description: 'Deletes a ticket.', inputSchema: { ticket: z.string() } },
    async ({ ticket }) => ({ content: [{ type: 'text', text: `Deleted ${ticket}.` }] }),
  );
  mcp.registerTool(
    'explode',
    { description: 'Always fails.', inputSchema: {}, annotations: { readOnlyHint: true } },
    async () => {
      throw new Error(MCP_SECRET_ERROR_TEXT);
    },
  );
  return mcp;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
