import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCountersignCli } from '../../bin/build-cli.js';
import { type CountersignCliIo, runCountersignCli } from '../../bin/countersign-cli.js';
import { useTestRuntime } from '../support/local-runtime.js';
import { MCP_TEST_TOKEN, type McpTestServer, startMcpTestServer } from '../support/mcp-test-server.js';
import { demoMachineClient } from './external-runs-support.js';

/** Runs the command in this process with the given environment; the gateway stops at once. */
async function runInProcess(args: string[], environment: Record<string, string>) {
  const output = { out: [] as string[], err: [] as string[] };
  const io: CountersignCliIo = {
    readFile: async () => '',
    fetchKmsPublicKey: async () => {
      throw new Error('not used');
    },
    print: (line) => output.out.push(line),
    printError: (line) => output.err.push(line),
    gateway: { environment, untilStopped: async () => undefined },
  };
  const status = await runCountersignCli(args, io);
  return { status, out: output.out.join('\n'), err: output.err.join('\n') };
}

describe('countersign mcp-gateway (the bundled command)', () => {
  const runtime = useTestRuntime();
  let folder: string;
  let bundle: string;
  let upstream: McpTestServer;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'countersign-cli-'));
    bundle = join(folder, 'countersign.mjs');
    await buildCountersignCli(bundle);
    upstream = await startMcpTestServer();
  }, 120_000);

  afterAll(async () => {
    child?.kill('SIGKILL');
    await upstream.stop();
    await rm(folder, { recursive: true, force: true });
  });

  const argumentsOf = (overrides: Record<string, string> = {}) => {
    const options: Record<string, string> = {
      upstream: upstream.url,
      api: runtime.url,
      'token-url': runtime.machine.tokenUrl,
      'client-id': demoMachineClient(runtime).clientId,
      configuration: 'demo-external',
      port: '0',
      'wait-seconds': '1',
      'poll-seconds': '1',
      ...overrides,
    };
    return Object.entries(options).flatMap(([name, value]) => [`--${name}`, value]);
  };

  it('serves the gateway from the bundle: a read passes through, a write waits on a card, SIGTERM stops it', async () => {
    // Prepare
    const started = spawn(
      process.execPath,
      [bundle, 'mcp-gateway', ...argumentsOf(), '--allow-loopback-upstream'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          COUNTERSIGN_CLIENT_SECRET: demoMachineClient(runtime).clientSecret,
          COUNTERSIGN_UPSTREAM_TOKEN: MCP_TEST_TOKEN,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = started;
    let printed = '';
    started.stdout?.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8');
    });
    const url = await new Promise<string>((resolve, reject) => {
      started.stdout?.on('data', () => {
        const found = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(printed)?.[1];
        if (found) resolve(found);
      });
      started.once('exit', (code) => reject(new Error(`the command exited (${code}) before serving`)));
    });
    const client = new Client({ name: 'test-ide', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));

    // Act
    const read = await client.callTool({ name: 'lookup', arguments: { ticket: 'T-cli-1' } });
    const write = await client.callTool({ name: 'create_ticket', arguments: { title: 'From the bundle' } });
    await client.close();
    const exited = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)));
    started.kill('SIGTERM');

    // Assess
    expect(read.content).toEqual([{ type: 'text', text: 'Ticket T-cli-1: open, assigned to Ana.' }]);
    expect(JSON.stringify(write.content)).toContain('Waiting for approval');
    expect(upstream.calls.some((call) => call.tool === 'create_ticket')).toBe(false);
    expect(await exited).toBe(0);
    expect(printed).toContain('configuration demo-external');
  });

  it('refuses to start without the client secret, or with an upstream on a reserved host', async () => {
    // Act
    const noSecret = await runInProcess(['mcp-gateway', ...argumentsOf()], {});
    const metadata = await runInProcess(
      ['mcp-gateway', ...argumentsOf({ upstream: 'https://169.254.169.254/mcp' })],
      { COUNTERSIGN_CLIENT_SECRET: 'secret-value-1' },
    );
    const loopback = await runInProcess(['mcp-gateway', ...argumentsOf()], {
      COUNTERSIGN_CLIENT_SECRET: 'secret-value-1',
    });
    const badNumber = await runInProcess(['mcp-gateway', ...argumentsOf({ 'wait-seconds': '1.5' })], {
      COUNTERSIGN_CLIENT_SECRET: 'secret-value-1',
    });
    const exposed = await runInProcess(
      ['mcp-gateway', ...argumentsOf({ host: '0.0.0.0' }), '--allow-loopback-upstream'],
      { COUNTERSIGN_CLIENT_SECRET: 'secret-value-1' },
    );

    // Assess
    expect(noSecret).toMatchObject({ status: 2 });
    expect(noSecret.err).toContain('Set COUNTERSIGN_CLIENT_SECRET');
    expect(metadata).toMatchObject({ status: 2 });
    expect(metadata.err).toContain(
      'upstream: 169.254.169.254 is a loopback, link-local or unspecified address',
    );
    expect(loopback.err).toContain('allow a loopback upstream');
    expect(badNumber.err).toContain('--wait-seconds: a whole number, not "1.5"');
    expect(exposed).toMatchObject({ status: 2 });
    expect(exposed.err).toContain('A gateway on 0.0.0.0 needs a client token');
    for (const answer of [metadata, loopback]) expect(answer.err).not.toContain('secret-value-1');
  });
});
