import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `npm start` (bin/local.ts) in its own process, as a person runs it, once its banner is out. */
export interface NpmStartProcess {
  readonly child: ChildProcess;
  /** The URL the banner printed (`countersign is running at ...`); '' when it did not. */
  readonly url: string;
  /** What the process printed on stdout so far. */
  output(): string;
  /** The token of a demo user's export line (`COUNTERSIGN_<NAME>_TOKEN`); '' when absent. */
  token(name: string): string;
  /** Kills the process and removes its data folder. */
  stop(): Promise<void>;
}

/**
 * Starts `npm start` on a free port with its data in a temporary folder and waits (up to
 * `timeoutMilliseconds`) for its banner.
 *
 * @example
 * const started = await startNpmStart();
 * createApiClient({ baseUrl: started.url, token: started.token('ADMIN') });
 */
export async function startNpmStart(timeoutMilliseconds = 60_000): Promise<NpmStartProcess> {
  const dataDirectory = await mkdtemp(join(tmpdir(), 'countersign-start-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    env: { ...process.env, COUNTERSIGN_PORT: '0', COUNTERSIGN_DATA_DIR: dataDirectory },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  const deadline = Date.now() + timeoutMilliseconds;
  while (!/Press Ctrl\+C/.test(output) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  return {
    child,
    url: /countersign is running at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? '',
    output: () => output,
    token: (name) => new RegExp(`export COUNTERSIGN_${name}_TOKEN=(\\S+)`).exec(output)?.[1] ?? '',
    stop: async () => {
      child.kill('SIGKILL');
      await rm(dataDirectory, { recursive: true, force: true });
    },
  };
}
