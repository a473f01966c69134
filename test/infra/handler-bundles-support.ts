import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll } from 'vitest';
import { buildSideModules, createEsbuildOptions } from '../../lib/functions.js';
import { resolveProjectPath } from '../../lib/project-path.js';

export const TOOLS_MODULE = resolveProjectPath('lambdas/tools/no-team-tools.ts');
export const HANDLERS_DIRECTORY = resolveProjectPath('lambdas/handlers');

/** Every Lambda entry: a file in lambdas/handlers/ that exports `handler`. */
export async function listHandlerEntries(): Promise<string[]> {
  const files = (await readdir(HANDLERS_DIRECTORY)).filter((file) => file.endsWith('.ts'));
  const entries: string[] = [];
  for (const file of files) {
    const source = await readFile(join(HANDLERS_DIRECTORY, file), 'utf8');
    if (/^export const handler\b/m.test(source)) entries.push(file);
  }
  return entries.sort();
}

/** Bundles an entry with the deployed settings into `directory`, as `<name>.mjs`. */
export async function bundle(
  entry: string,
  directory: string,
  name: string,
  options: { withSideModules?: boolean } = {},
): Promise<Metafile> {
  const result = await build({
    ...createEsbuildOptions(entry, TOOLS_MODULE),
    outfile: join(directory, `${name}.mjs`),
    metafile: true,
  });
  // What deploys beside the bundle (the tokenizer, the Encryption SDK), as the CDK builds it.
  if (options.withSideModules) {
    await buildSideModules(directory, await readFile(join(directory, `${name}.mjs`), 'utf8'), TOOLS_MODULE);
  }
  return result.metafile;
}

// Runs in the child: the Lambda runtime's streaming global, one invocation, its answer as JSON.
const INVOKE_ONCE = `
const chunks = [];
globalThis.awslambda = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: { from: (stream, prelude) => { chunks.push(JSON.stringify(prelude)); return stream; } },
};
const { handler } = await import(process.argv[1]);
const stream = { write: (chunk) => { chunks.push(String(chunk)); return true; }, end: (chunk) => { if (chunk) chunks.push(String(chunk)); }, on: () => stream, once: () => stream, setContentType: () => {} };
let answer;
try {
  const result = await handler(JSON.parse(process.argv[2]), stream);
  answer = result === undefined ? { streamed: chunks.join('') } : result;
} catch (error) {
  answer = { error: error.name };
}
process.stdout.write('\\n' + 'ANSWER ' + JSON.stringify(answer));
`;

export async function invokeInFreshProcess(
  bundlePath: string,
  event: unknown,
  environment: Record<string, string>,
): Promise<unknown> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', INVOKE_ONCE, pathToFileURL(bundlePath).href, JSON.stringify(event)],
    {
      env: {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        COUNTERSIGN_SEALING_KEY_ARN:
          'arn:aws:kms:us-east-1:111122223333:key/00000000-0000-0000-0000-000000000000',
        COUNTERSIGN_OVERFLOW_BUCKET: 'countersign-overflow-test',
        COUNTERSIGN_OVERFLOW_KEY_ARN:
          'arn:aws:kms:us-east-1:111122223333:key/11111111-1111-1111-1111-111111111111',
        // The deciding functions' receipt key (the construct tells api-decision and slack-interactions).
        COUNTERSIGN_RECEIPT_KEY_ARN:
          'arn:aws:kms:us-east-1:111122223333:key/22222222-2222-2222-2222-222222222222',
        COUNTERSIGN_MODEL_PROVIDER: 'scripted',
        COUNTERSIGN_JWT_ISSUER: 'https://issuer.example.com',
        COUNTERSIGN_JWT_AUDIENCE: 'countersign',
        // The channels' settings, as the construct sets them on their functions.
        COUNTERSIGN_SLACK_BOT_TOKEN_SECRET_ARN:
          'arn:aws:secretsmanager:us-east-1:111122223333:secret:bot-abcdef',
        COUNTERSIGN_SLACK_SIGNING_SECRET_ARN:
          'arn:aws:secretsmanager:us-east-1:111122223333:secret:signing-abcdef',
        COUNTERSIGN_SLACK_ROUTES: '[{"channelId":"C0123456789"}]',
        COUNTERSIGN_EMAIL_FROM_ADDRESS: 'countersign@example.com',
        COUNTERSIGN_INBOX_URL: 'https://abc.execute-api.us-east-1.amazonaws.com/',
        POWERTOOLS_LOG_LEVEL: 'ERROR',
        ...environment,
      },
    },
  );
  // The handler's own log lines share stdout; the answer is the last line.
  const answer = stdout.split('\n').at(-1) ?? '';
  return JSON.parse(answer.replace(/^ANSWER /, ''));
}

/**
 * A folder for the bundles of one test file, removed after it. Inside node_modules, so a bundle
 * resolves @aws-sdk/* as the Lambda runtime provides it; `directory` is set before the first case.
 */
export function useBundleDirectory(): { readonly directory: string } {
  const bundles = { directory: '' };
  beforeAll(async () => {
    const cache = resolveProjectPath('node_modules/.cache');
    await mkdir(cache, { recursive: true });
    // Its real path: Node reports where a module resolved without the symlinks on the way.
    bundles.directory = await realpath(await mkdtemp(join(cache, 'countersign-bundles-')));
  });
  afterAll(async () => {
    await rm(bundles.directory, { recursive: true, force: true });
  });
  return bundles;
}
