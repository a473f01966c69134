import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * Serves one HTTP request with an SDK server of its own over a stateless streamable HTTP
 * transport (no session id), both closed when the response closes: no state outlives a request.
 *
 * @example
 * await serveStatelessMcpRequest(new McpServer({ name: 'tickets', version: '1' }), request, response, body);
 */
export async function serveStatelessMcpRequest(
  mcp: { connect(transport: Transport): Promise<void>; close(): Promise<void> },
  request: IncomingMessage,
  response: ServerResponse,
  body: unknown,
): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  response.on('close', () => {
    void transport.close();
    void mcp.close();
  });
  await mcp.connect(transport);
  await transport.handleRequest(request, response, body);
}
