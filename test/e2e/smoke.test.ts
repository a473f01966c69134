import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `npm run smoke` against `npm start`: the same command an operator runs after `cdk deploy`,
 * in its own process, against the local runtime in its own process.
 */
describe('npm run smoke (bin/smoke.ts) against npm start', () => {
  let child: ChildProcess | undefined;
  let dataDirectory = '';
  let url = '';
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    dataDirectory = await mkdtemp(join(tmpdir(), 'countersign-smoke-'));
    const started = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
      env: { ...process.env, COUNTERSIGN_PORT: '0', COUNTERSIGN_DATA_DIR: dataDirectory },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let output = '';
    started.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    const deadline = Date.now() + 90_000;
    while (!/Press Ctrl\+C/.test(output) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    url = /countersign is running at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? '';
    for (const name of ['ADMIN', 'EDITOR']) {
      tokens[name] = new RegExp(`export COUNTERSIGN_${name}_TOKEN=(\\S+)`).exec(output)?.[1] ?? '';
    }
  }, 120_000);

  afterAll(async () => {
    child?.kill('SIGKILL');
    if (dataDirectory) await rm(dataDirectory, { recursive: true, force: true });
  });

  /** Runs the smoke command in its own process; its exit code and what it printed. */
  async function smoke(args: string[]): Promise<{ code: number; lines: string[] }> {
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'bin/smoke.ts', ...args],
        {
          env: process.env,
        },
      );
      return { code: 0, lines: stdout.trim().split('\n') };
    } catch (error) {
      const failure = error as { code?: number; stdout?: string };
      return { code: failure.code ?? -1, lines: (failure.stdout ?? '').trim().split('\n') };
    }
  }

  it('drives one run through start, pause, card, decision, completion and audit, printing each step and its time', async () => {
    // Act
    const { code, lines } = await smoke(['--url', url, '--token', tokens.ADMIN ?? '']);

    // Assess
    expect(code, lines.join('\n')).toBe(0);
    const steps = lines.slice(0, -1).map((line) => /^(ok|skip|FAIL)\s+(\S+)\s.*\((\d+) ms\)$/.exec(line));
    expect(steps.map((match) => match?.[2])).toEqual([
      'setup',
      'start',
      'pause',
      'card',
      'decide',
      'completed',
      'audit',
    ]);
    expect(steps.slice(0, 6).map((match) => match?.[1])).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
    // The audit route is served (ok) or, on a deployment without it, skipped with its reason.
    expect(['ok', 'skip']).toContain(steps[6]?.[1]);
    expect(lines.find((line) => line.includes(' card '))).toMatch(/update_page_metadata, preview shown/);
    expect(lines.at(-1)).toMatch(/^smoke test passed in \d+ ms \(run [\w-]+\)$/);
  }, 180_000);

  it('stops at the first step that fails, naming it, with exit code 1', async () => {
    // Act: the editor may not create the smoke configuration
    const { code, lines } = await smoke(['--url', url, '--token', tokens.EDITOR ?? '']);

    // Assess
    expect(code).toBe(1);
    expect(lines[0]).toMatch(/^FAIL {2}setup\s+PUT \/admin\/configurations answered 403: .*admin.*grant/);
    expect(lines.at(-1)).toMatch(/^smoke test FAILED at setup after \d+ ms$/);
  }, 120_000);

  it('refuses missing or malformed options with its usage and exit code 2', async () => {
    // Act
    const missing = await smoke(['--url', url]);
    const malformed = await smoke(['--url', 'not-a-url', '--token', 'x']);

    // Assess
    expect(missing.code).toBe(2);
    expect(missing.lines[0]).toBe(
      '--token is missing: a JWT of a user with admin, agent_run and agent_approve.',
    );
    expect(missing.lines).toContain('Usage: npm run smoke -- --url <ApiUrl> --token <JWT> [options]');
    expect(malformed.code).toBe(2);
    expect(malformed.lines[0]).toBe('--url "not-a-url" is not an http(s) URL.');
  }, 60_000);
});
