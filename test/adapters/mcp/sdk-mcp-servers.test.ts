import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvironmentMcpSecrets } from '../../../lambdas/adapters/mcp/environment-mcp-secrets.js';
import { SdkMcpServers } from '../../../lambdas/adapters/mcp/sdk-mcp-servers.js';
import { nameErrorClass } from '../../../lambdas/core/errors.js';
import { MCP_TEST_TOKEN, type McpTestServer, startMcpTestServer } from '../../support/mcp-test-server.js';
import { startMisbehavingServer } from '../../support/misbehaving-server.js';

const environment = {
  COUNTERSIGN_MCP_SECRET_TICKETS: MCP_TEST_TOKEN,
  COUNTERSIGN_MCP_SECRET_WRONG: 'not-it',
};

function serverAt(url: string, authSecret = 'tickets', timeoutMs = 10_000) {
  return { name: 'tickets', url, authSecret, timeoutMs, approversMayReadPreviews: false };
}

describe('the MCP client over the official SDK', () => {
  // Local mode's policy: loopback over http, as `npm start` allows.
  const servers = new SdkMcpServers({
    secrets: new EnvironmentMcpSecrets(environment),
    hostPolicy: { allowedHosts: [], allowLoopback: true },
  });
  let tickets: McpTestServer;
  let silent: Server;
  let silentUrl: string;

  beforeAll(async () => {
    tickets = await startMcpTestServer();
    // Accepts connections and never answers: only the deadline ends a call to it.
    silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    await tickets.stop();
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('lists the tools with their schema and read-only hint, and calls one with the bearer secret', async () => {
    // Act
    const listed = await servers.listTools(serverAt(tickets.url));
    const result = await servers.callTool(serverAt(tickets.url), 'lookup', { ticket: 'T-4' });

    // Assess
    expect(listed.map((tool) => [tool.name, tool.annotations?.readOnlyHint])).toEqual([
      ['lookup', true],
      ['create_ticket', false],
      ['create_ticket__preview', true],
      ['delete_ticket', undefined],
      ['explode', true],
    ]);
    expect(listed[0]?.inputSchema).toMatchObject({
      type: 'object',
      properties: { ticket: { type: 'string' } },
    });
    expect(result).toEqual({ text: 'Ticket T-4: open, assigned to Ana.', isError: false });
  });

  it('returns a tool that throws as an error result', async () => {
    // Act
    const result = await servers.callTool(serverAt(tickets.url), 'explode', {});

    // Assess
    expect(result.isError).toBe(true);
  });

  it('ends a call to a server that never answers with McpTimeout instead of hanging', async () => {
    // Act
    const error = await servers
      .listTools(serverAt(silentUrl, 'tickets', 300))
      .catch((caught: unknown) => caught);

    // Assess
    expect(nameErrorClass(error)).toBe('McpTimeout');
  });

  it('fails with a plain class, no token, for a wrong secret, a missing secret and a closed port', async () => {
    // Prepare
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/mcp`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    // Act
    const errors = await Promise.all(
      [serverAt(tickets.url, 'wrong'), serverAt(tickets.url, 'absent'), serverAt(closedUrl)].map((server) =>
        servers.listTools(server).then(
          () => undefined,
          (caught: unknown) => caught,
        ),
      ),
    );

    // Assess
    expect(errors.every((error) => error instanceof Error)).toBe(true);
    expect(nameErrorClass(errors[1])).toBe('McpSecretMissing');
    for (const error of errors) expect(nameErrorClass(error)).not.toContain(MCP_TEST_TOKEN);
  });

  it('refuses a host the deployed policy does not list before any request or secret leaves', async () => {
    // Prepare: deployed rules (https to listed hosts only) and a loopback server recording requests
    const recorder = await startRecordingServer();
    const deployed = new SdkMcpServers({
      secrets: new EnvironmentMcpSecrets(environment),
      hostPolicy: { allowedHosts: [new URL(recorder.url).host], allowLoopback: false },
    });

    // Act
    const error = await deployed.listTools(serverAt(recorder.url)).catch((caught: unknown) => caught);

    // Assess
    expect(nameErrorClass(error)).toBe('McpHostNotAllowed');
    expect((error as Error).message).toMatch(/^MCP server tickets: host not allowed/);
    expect(recorder.requests).toEqual([]);
    await recorder.stop();
  });

  it('stops reading a server that answers with more than its limit (a gzip bomb), with OutboundResponseTooLarge', async () => {
    // Prepare
    const bloated = await startMisbehavingServer();
    bloated.behave({ kind: 'bloat', bytes: 100 * 1024 * 1024, encoding: 'gzip', declareLength: true });

    // Act
    const error = await servers
      .listTools(serverAt(`${bloated.origin}/mcp`))
      .catch((caught: unknown) => caught);
    await bloated.stop();

    // Assess
    expect(nameErrorClass(error)).toBe('OutboundResponseTooLarge');
  });

  it('follows no redirect, to the same origin or another host, so the secret goes nowhere else', async () => {
    // Prepare: one server redirects to its own other path, one to another host's server
    const target = await startRecordingServer();
    const sameOrigin = await startRecordingServer((url) => (url === '/mcp' ? '/elsewhere' : undefined));
    const otherHost = await startRecordingServer(() => target.url.replace('127.0.0.1', 'localhost'));

    // Act
    const errors = await Promise.all(
      [sameOrigin.url, otherHost.url].map((url) =>
        servers.listTools(serverAt(url)).catch((caught: unknown) => caught),
      ),
    );

    // Assess: each was asked once, and no request followed the redirect
    expect(errors.map(nameErrorClass)).toEqual(['OutboundRedirectRefused', 'OutboundRedirectRefused']);
    expect(sameOrigin.requests.map((request) => request.url)).toEqual(['/mcp']);
    expect(otherHost.requests.map((request) => request.url)).toEqual(['/mcp']);
    expect(target.requests).toEqual([]);
    await Promise.all([target.stop(), sameOrigin.stop(), otherHost.stop()]);
  });
});

/** A loopback HTTP server that records every request; it redirects where `redirectOf` says, else 500. */
async function startRecordingServer(redirectOf: (url: string) => string | undefined = () => undefined) {
  const requests: Array<{ url: string; authorization: string | undefined }> = [];
  const server = createServer((request, response) => {
    requests.push({ url: request.url ?? '', authorization: request.headers.authorization });
    const location = redirectOf(request.url ?? '');
    if (location === undefined) response.writeHead(500).end();
    else response.writeHead(307, { location }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
