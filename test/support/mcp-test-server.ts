import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { serveStatelessMcpRequest } from '../../lambdas/agents/mcp-gateway/stateless-mcp-request.js';

/** The token the test server accepts; the runtime reads it from the environment. */
export const MCP_TEST_TOKEN = 'mcp-test-token-7f3a';
/** Text a failing tool throws: it must reach no log line. */
export const MCP_SECRET_ERROR_TEXT = 'backend password hunter2 rejected';

/**
 * How the server answers one `tools/list`: `as-listed` as usual, `fail` with an HTTP 500 (the
 * listing fails while the server is up), or with the named tools' `readOnlyHint` replaced
 * (`undefined` leaves the hint out).
 */
export type ListingAnswer =
  | 'as-listed'
  | 'fail'
  | { readOnlyHints: Readonly<Record<string, boolean | undefined>> };

export interface McpTestServer {
  url: string;
  /** Every tool call the server received, in order (previews included). */
  calls: Array<{ tool: string; arguments: unknown }>;
  /** Tool lists the server answered. */
  listings: number;
  /**
   * Scripts the next `tools/list` requests, one answer each in order; after the script, every
   * listing is `as-listed` again. A run's model turn, its pause and its execution each list once,
   * so `['as-listed', 'fail']` fails the listing at the pause only.
   */
  scriptListings(answers: readonly ListingAnswer[]): void;
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
  const script: ListingAnswer[] = [];
  const server: Server = createServer(async (request, response) => {
    if (request.headers.authorization !== `Bearer ${MCP_TEST_TOKEN}`) {
      response.writeHead(401).end();
      return;
    }
    const body = request.method === 'POST' ? JSON.parse(await readBody(request)) : undefined;
    const listing = body?.method === 'tools/list' ? (script.shift() ?? 'as-listed') : 'as-listed';
    if (listing === 'fail') {
      response.writeHead(500).end();
      return;
    }
    if (body?.method === 'tools/list') state.listings += 1;
    if (body?.method === 'tools/call')
      calls.push({ tool: body.params.name, arguments: body.params.arguments });
    const mcp = createMcpServer(listing === 'as-listed' ? {} : listing.readOnlyHints);
    await serveStatelessMcpRequest(mcp, request, response, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    get listings() {
      return state.listings;
    },
    scriptListings(answers) {
      script.splice(0, script.length, ...answers);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The server's tools, each tool's `readOnlyHint` replaced where `readOnlyHints` names it. */
function createMcpServer(readOnlyHints: Readonly<Record<string, boolean | undefined>>): McpServer {
  const mcp = new McpServer({ name: 'tickets', version: '1.0.0' });
  const hinted = (tool: string, annotations: { readOnlyHint?: boolean; destructiveHint?: boolean }) => {
    if (!Object.hasOwn(readOnlyHints, tool)) return annotations;
    const { readOnlyHint: _listed, ...rest } = annotations;
    const hint = readOnlyHints[tool];
    return hint === undefined ? rest : { ...rest, readOnlyHint: hint };
  };
  mcp.registerTool(
    'lookup',
    {
      description: 'Looks a ticket up.',
      inputSchema: { ticket: z.string() },
      annotations: hinted('lookup', { readOnlyHint: true }),
    },
    async ({ ticket }) => ({ content: [{ type: 'text', text: `Ticket ${ticket}: open, assigned to Ana.` }] }),
  );
  mcp.registerTool(
    'create_ticket',
    {
      description: 'Creates a ticket.',
      inputSchema: { title: z.string() },
      annotations: hinted('create_ticket', { readOnlyHint: false, destructiveHint: false }),
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
    {
      description: 'Deletes a ticket.',
      inputSchema: { ticket: z.string() },
      // No annotations at all, unless a listing hints one.
      ...(Object.hasOwn(readOnlyHints, 'delete_ticket') ? { annotations: hinted('delete_ticket', {}) } : {}),
    },
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
