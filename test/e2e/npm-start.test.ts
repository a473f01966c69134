import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../lambdas/contract/api-client.js';
import { createValidatingFetch } from '../support/openapi-response-validator.js';

describe('npm start (bin/local.ts)', () => {
  let child: ChildProcess | undefined;
  let dataDirectory = '';

  afterAll(async () => {
    child?.kill('SIGKILL');
    if (dataDirectory) await rm(dataDirectory, { recursive: true, force: true });
  });

  it('serves on 127.0.0.1, prints the URL and a working token per demo user, and stops cleanly', async () => {
    // Prepare
    dataDirectory = await mkdtemp(join(tmpdir(), 'countersign-start-'));
    const started = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
      env: { ...process.env, COUNTERSIGN_PORT: '0', COUNTERSIGN_DATA_DIR: dataDirectory },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let output = '';
    started.stdout?.on('data', (chunk) => {
      output += chunk;
    });

    // Act: wait for the banner
    const deadline = Date.now() + 60_000;
    while (!/Press Ctrl\+C/.test(output) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const url = /countersign is running at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    const token = (name: string) => new RegExp(`export ${name}=(\\S+)`).exec(output)?.[1];

    // Assess
    expect(url).toBeDefined();
    for (const name of ['EDITOR', 'APPROVER', 'OPS_APPROVER', 'ADMIN'])
      expect(token(`COUNTERSIGN_${name}_TOKEN`)).toMatch(/^eyJ/);
    // A bare EDITOR would replace the shell's $EDITOR (git would run the token as its editor).
    expect(output).not.toMatch(/export (EDITOR|APPROVER|OPS_APPROVER|ADMIN)=/);
    const clientOf = (name: string) =>
      createApiClient({ baseUrl: url ?? '', token: token(name) ?? '', fetch: createValidatingFetch() });
    const inbox = await clientOf('COUNTERSIGN_APPROVER_TOKEN').listInbox();
    expect(inbox.status).toBe(200);
    const refused = await clientOf('COUNTERSIGN_EDITOR_TOKEN').listInbox();
    expect(refused.status).toBe(403);
    const exited = new Promise<number | null>((resolve) => started.on('exit', (code) => resolve(code)));
    started.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
