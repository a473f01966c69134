import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../lambdas/contract/api-client.js';
import type { CardView } from '../../lambdas/core/approvals/card-reader.js';
import type { Configuration } from '../../lambdas/core/configurations.js';
import { DEMO_CONFIGURATIONS } from '../../lambdas/local/demo-data.js';
import { createValidatingFetch } from '../support/openapi-response-validator.js';

const children: ChildProcess[] = [];
const directories: string[] = [];

/** Starts `npm start` (bin/local.ts) with extra environment; resolves with its output once it stops talking. */
async function start(environment: Record<string, string>) {
  const dataDirectory = await mkdtemp(join(tmpdir(), 'countersign-start-team-'));
  directories.push(dataDirectory);
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    env: { ...process.env, COUNTERSIGN_PORT: '0', COUNTERSIGN_DATA_DIR: dataDirectory, ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk) => {
    output.stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output.stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited };
}

async function waitForBanner(output: { stdout: string }): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!/Press Ctrl\+C/.test(output.stdout) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
}

async function eventually<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 300; attempt += 1) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('The condition was not met.');
}

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describe("npm start with a team's tools and approval timeout (issue #15, item 5)", () => {
  it("shows the team tool's preview on the card, dated by the approval timeout the ASL waits", async () => {
    // Prepare
    const { child, output, exited } = await start({
      COUNTERSIGN_TOOLS_MODULE: 'test/fixtures/team-tools/one-tool.ts',
      COUNTERSIGN_APPROVAL_TIMEOUT: '2h',
    });
    await waitForBanner(output);
    const url = /countersign is running at (http:\/\/127\.0\.0\.1:\d+)/.exec(output.stdout)?.[1];
    const token = (name: string) =>
      new RegExp(`export COUNTERSIGN_${name}_TOKEN=(\\S+)`).exec(output.stdout)?.[1];
    expect(url).toBeDefined();
    const client = (as: string) =>
      createApiClient({ baseUrl: url ?? '', token: token(as) ?? '', fetch: createValidatingFetch() });
    const demo = DEMO_CONFIGURATIONS.find(
      (configuration) => configuration.configurationId === 'demo-scripted',
    ) as Configuration;
    const allowed = await client('ADMIN').putConfiguration({
      path: { id: 'demo-scripted' },
      body: { ...demo, allowedTools: [...demo.allowedTools, 'close_ticket'] },
    });
    expect(allowed.status).toBe(200);

    // Act
    const started = await client('EDITOR').startRun({
      body: { configurationId: 'demo-scripted', input: 'Call close_ticket with {"ticketId":"T-7"}' },
    });
    expect(started.status).toBe(202);
    const runId = started.status === 202 ? started.body?.runId : undefined;
    const card = await eventually(async () => {
      const inbox = await client('ADMIN').listInbox({ query: { limit: 100 } });
      const cards = inbox.status === 200 ? (inbox.body?.cards ?? []) : [];
      return cards.find((candidate) => candidate.runId === runId && !('unopenable' in candidate)) as
        | CardView
        | undefined;
    });

    // Assess: the team tool's own preview, and a deadline two hours out (less the card's margin).
    expect(card.pendingTools).toEqual([
      expect.objectContaining({
        tool: 'close_ticket',
        preview: expect.objectContaining({ lines: ['Ticket T-7: status "open" → "closed"'] }),
      }),
    ]);
    const window = Date.parse(String(card.expiresAt)) - Date.parse(String(card.pausedAt));
    expect(window).toBe(2 * 3_600_000 - 300_000);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('refuses a tools module that does not exist or exports no teamTools, and a timeout it cannot read', async () => {
    const cases: Array<{ environment: Record<string, string>; message: string }> = [
      {
        environment: { COUNTERSIGN_TOOLS_MODULE: 'test/fixtures/team-tools/missing.ts' },
        message:
          'COUNTERSIGN_TOOLS_MODULE names "test/fixtures/team-tools/missing.ts", which does not exist.',
      },
      {
        environment: { COUNTERSIGN_TOOLS_MODULE: 'test/fixtures/team-tools/no-team-tools-export.ts' },
        message: 'exports no `teamTools` array',
      },
      {
        environment: { COUNTERSIGN_APPROVAL_TIMEOUT: 'three days' },
        message: 'COUNTERSIGN_APPROVAL_TIMEOUT must be whole seconds or a number with s, m, h or d',
      },
      {
        // The construct's own range check, as a deployment would refuse it.
        environment: { COUNTERSIGN_APPROVAL_TIMEOUT: '30d' },
        message: 'approvalTimeout 30 days is out of range',
      },
    ];
    for (const { environment, message } of cases) {
      // Act
      const { output, exited } = await start(environment);

      // Assess: a clear message and exit code 2, no stack and no server.
      expect(await exited).toBe(2);
      expect(output.stderr).toContain(message);
      expect(output.stderr).not.toMatch(/\n\s+at /);
      expect(output.stdout).not.toContain('countersign is running');
    }
  });
});
