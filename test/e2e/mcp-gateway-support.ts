import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { type McpGateway, startMcpGateway } from '../../lambdas/agents/mcp-gateway/mcp-gateway-server.js';
import { eventually, type ResponseJson, type TestRuntime } from '../support/local-runtime.js';
import { MCP_TEST_TOKEN, type McpTestServer, startMcpTestServer } from '../support/mcp-test-server.js';
import { demoMachineClient } from './external-runs-support.js';

/** The gateway in front of the test upstream, the embedded runtime as its approval API. */
export function startGateway(
  runtime: TestRuntime,
  upstream: McpTestServer,
  overrides: Partial<Parameters<typeof startMcpGateway>[0]> = {},
): Promise<McpGateway> {
  const client = demoMachineClient(runtime);
  return startMcpGateway({
    upstreamUrl: upstream.url,
    upstreamToken: MCP_TEST_TOKEN,
    allowLoopbackUpstream: true,
    apiUrl: runtime.url,
    tokenUrl: runtime.machine.tokenUrl,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    configurationId: 'demo-external',
    ...overrides,
  });
}

/** An MCP client of the official SDK, connected to the gateway over streamable HTTP. */
export async function connectClient(gateway: McpGateway, token?: string): Promise<Client> {
  const client = new Client({ name: 'test-ide', version: '1' });
  const requestInit =
    token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } };
  await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url), requestInit));
  return client;
}

/** The card of the gateway's call of `tool` whose arguments include `marker`, as the approver reads it. */
export function cardOfCall(runtime: TestRuntime, tool: string, marker: string): Promise<ResponseJson> {
  return eventually(async () => {
    const inbox: ResponseJson = (await runtime.client('approver').listInbox({ query: { limit: 100 } })).body;
    return (inbox?.cards ?? []).find((card: ResponseJson) =>
      card.pendingTools.some(
        (pending: ResponseJson) =>
          pending.tool === `demo-external/${tool}` && JSON.stringify(pending.arguments).includes(marker),
      ),
    );
  });
}

export async function cardsOfCall(runtime: TestRuntime, marker: string): Promise<ResponseJson[]> {
  const inbox: ResponseJson = (await runtime.client('approver').listInbox({ query: { limit: 100 } })).body;
  return (inbox?.cards ?? []).filter((card: ResponseJson) => JSON.stringify(card).includes(marker));
}

/** A POST whose Host header names another site, as a page on a rebound name would send it. */
export function statusWithHost(url: string, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      { method: 'POST', headers: { host, 'content-type': 'application/json' } },
      (answer) => {
        answer.resume();
        resolve(answer.statusCode);
      },
    );
    sent.on('error', reject);
    sent.end('{"jsonrpc":"2.0","id":1,"method":"ping"}');
  });
}

export const textOf = (result: Awaited<ReturnType<Client['callTool']>>): string =>
  (result.content as Array<{ text: string }>).map((block) => block.text).join('\n');

export const callsOf = (upstream: McpTestServer, tool: string) =>
  upstream.calls.filter((call) => call.tool === tool);

/**
 * A test upstream with the named gateways in front of it, each with an SDK client: started before
 * the file's tests, stopped after them; each test starts with the upstream listing as usual.
 */
export function useGateways<Name extends string>(
  runtime: TestRuntime,
  settings: Readonly<Record<Name, Partial<Parameters<typeof startMcpGateway>[0]>>>,
) {
  const fixture = {
    upstream: undefined as unknown as McpTestServer,
    gateways: {} as Record<Name, McpGateway>,
    clients: {} as Record<Name, Client>,
  };
  const names = Object.keys(settings) as Name[];
  beforeAll(async () => {
    fixture.upstream = await startMcpTestServer();
    for (const name of names) {
      fixture.gateways[name] = await startGateway(runtime, fixture.upstream, settings[name]);
      fixture.clients[name] = await connectClient(fixture.gateways[name]);
    }
  });
  afterEach(() => {
    fixture.upstream.scriptListings([]);
  });
  afterAll(async () => {
    for (const name of names) {
      await fixture.clients[name].close();
      await fixture.gateways[name].stop();
    }
    await fixture.upstream.stop();
  });
  return fixture;
}
