import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configurationSchema } from '../../lambdas/core/configurations.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { startRunAndSettle, useTestRuntime } from '../support/local-runtime.js';

const SECRET_VARIABLE = 'COUNTERSIGN_MCP_SECRET_ALLOWED_HOSTS_TOKEN';

describe('MCP servers under the deployed host rules (https, listed hosts only), through the local runtime', () => {
  // What a deployment with no mcpAllowedHosts enforces: a loopback server is not reachable.
  const runtime = useTestRuntime({ mcpHostPolicy: { allowedHosts: [], allowLoopback: false } });
  // A loopback server that records every request: any request means the check was passed by.
  const requests: Array<{ url: string; authorization: string | undefined }> = [];
  let recorder: Server;
  let url: string;
  let host: string;

  beforeAll(async () => {
    process.env[SECRET_VARIABLE] = 'secret-that-must-not-travel';
    recorder = createServer((request, response) => {
      requests.push({ url: request.url ?? '', authorization: request.headers.authorization });
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(recorder.address() as AddressInfo).port}`;
    url = `http://${host}/mcp`;
  });

  afterAll(async () => {
    delete process.env[SECRET_VARIABLE];
    recorder.closeAllConnections();
    await new Promise<void>((resolve) => recorder.close(() => resolve()));
  });

  function server(name: string, serverUrl: string) {
    return { name, url: serverUrl, authSecret: 'allowed-hosts-token', timeoutMs: 2_000 };
  }

  function configuration(configurationId: string, servers: ReturnType<typeof server>[]) {
    return {
      configurationId,
      label: `MCP ${configurationId}`,
      provider: 'scripted' as const,
      model: 'scripted',
      allowedTools: ['get_page'],
      mcpServers: servers,
    };
  }

  it('refuses an admin PUT naming a host that is not allowed with a 400 naming the field and the host, and stores nothing', async () => {
    // Act
    const put = await runtime.client('admin').putConfiguration({
      path: { id: 'mcp-not-allowed' },
      body: configuration('mcp-not-allowed', [
        server('tickets', 'https://127.0.0.1/mcp'),
        server('internal', url),
      ]),
    });
    const read = await runtime.client('admin').getConfiguration({ path: { id: 'mcp-not-allowed' } });

    // Assess: the first server fails first (https to an unlisted loopback address)
    expect(put.status).toBe(400);
    expect(put.body).toMatchObject({ error: { code: 'bad-request', field: 'body.mcpServers.0.url' } });
    expect(JSON.parse(put.text).error.message).toBe(
      `body.mcpServers.0.url: the host "127.0.0.1" is not allowed: it is not on the deployment's allowed MCP hosts (mcpAllowedHosts).`,
    );
    expect(read.status).toBe(404);
    expect(requests).toEqual([]);
  });

  it("names the http server's field and host when it is the only one", async () => {
    // Prepare
    const body = configuration('mcp-http', [server('internal', url)]);

    // Act
    const put = await runtime.client('admin').putConfiguration({ path: { id: 'mcp-http' }, body });

    // Assess
    expect(put.status).toBe(400);
    expect(JSON.parse(put.text).error.message).toBe(
      `body.mcpServers.0.url: must be an https URL ("${host}" is reached over http, which only loopback hosts may use locally).`,
    );
    expect((await runtime.client('admin').getConfiguration({ path: { id: 'mcp-http' } })).status).toBe(404);
    expect(requests).toEqual([]);
  });

  it('fails a run whose configuration was stored before with the reason naming the server, and sends no request', async () => {
    // Prepare: stored as an earlier deployment (or a direct write) could have left it
    await runtime.dependencies.configurations.putConfiguration(
      configurationSchema.parse(configuration('mcp-stored-earlier', [server('internal', url)])),
    );

    // Act
    const { view } = await startRunAndSettle(runtime, 'call internal__lookup with {"ticket":"T-1"}', {
      configurationId: 'mcp-stored-earlier',
    });

    // Assess
    expect(view.status).toBe('failed');
    expect(view.failureReason).toBe(TEXTS.mcpServerHostNotAllowed('internal'));
    expect(view.failureReason).toMatch(/^MCP server internal: host not allowed/);
    expect(requests).toEqual([]);
  });
});
