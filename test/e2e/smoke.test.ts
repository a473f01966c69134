import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NpmStartProcess, startNpmStart } from '../support/npm-start-process.js';

/**
 * `npm run smoke` against `npm start`: the same command an operator runs after `cdk deploy`,
 * in its own process, against the local runtime in its own process.
 */
describe('npm run smoke (bin/smoke.ts) against npm start', () => {
  let started: NpmStartProcess | undefined;

  beforeAll(async () => {
    started = await startNpmStart(90_000);
  }, 120_000);

  afterAll(async () => {
    await started?.stop();
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
    const { code, lines } = await smoke([
      '--url',
      started?.url ?? '',
      '--token',
      started?.token('ADMIN') ?? '',
    ]);

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
    const { code, lines } = await smoke([
      '--url',
      started?.url ?? '',
      '--token',
      started?.token('EDITOR') ?? '',
    ]);

    // Assess
    expect(code).toBe(1);
    expect(lines[0]).toMatch(/^FAIL {2}setup\s+PUT \/admin\/configurations answered 403: .*admin.*grant/);
    expect(lines.at(-1)).toMatch(/^smoke test FAILED at setup after \d+ ms$/);
  }, 120_000);

  it('refuses missing or malformed options with its usage and exit code 2', async () => {
    // Act
    const missing = await smoke(['--url', started?.url ?? '']);
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
