/**
 * The first-request part of `npm run bench` (issue #27): what a person waits for after an idle
 * period. For each handler, a fresh Node process (the Lambda runtime's major) imports the
 * SHIPPED handler folder (what `npm run build` writes to dist/assets/handlers: the bundle, its
 * side modules, built by `buildPrebuiltHandlers`) and handles one representative request against
 * the local stand-ins: dynalite, a fake KMS for the sealing key (the bundles seal with the KMS
 * keyring, as deployed), Step Functions and EventBridge stand-ins, an OIDC issuer, the scripted
 * model. Each is paired, in the same round, with a hello-world that builds a DynamoDB client and
 * makes one GetItem against the same dynalite; the figure is CPU time of init + first request,
 * as a median of paired ratios. `npx tsx bench/first-request.ts [rounds] [handler ...] [--breakdown]`
 * runs it alone (for some handlers only; with the breakdown for every handler, not only those
 * that miss their target). With BENCH_CPU_PROF_DIR set, each measured handler process also
 * writes a V8 CPU profile there (`node --cpu-prof`), to look inside the request's own part.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import { createKmsKeyWrapping } from '../lambdas/adapters/envelope-sealer.js';
import { buildPrebuiltHandlers } from '../lib/handler-assets.js';
import { HANDLER_NAMES, type HandlerName } from '../lib/handler-names.js';
import { resolveProjectPath } from '../lib/project-path.js';
import { startFakeKmsServer } from '../test/support/fake-kms-server.js';
import { BENCH_PRINCIPAL_QUOTAS, BENCH_USER_ID, CallPaths, startBenchRuntime } from './call-paths.js';
import { median, resolveRuntimeNode } from './cold-start.js';
import { BENCH_AUDIENCE, type FirstRequest, FirstRequestFixtures } from './first-request-fixtures.js';
import {
  type SdkRequestHandler,
  startDynamoBridge,
  startFirstRequestStandIns,
} from './first-request-stand-ins.js';

const run = promisify(execFile);

/** Rounds of the whole set; each round is one fresh process per handler and one reference beside each. */
export const FIRST_REQUEST_ROUNDS = 7;
/** Samples of the per-module breakdown of a handler that misses its target. */
const BREAKDOWN_SAMPLES = 5;

/** Targets as ratios to the hello-world's init + GetItem (issue #27). */
export const FIRST_REQUEST_TARGETS = { 'API handler': 1.5, step: 1.5, 'model-turn': 2 } as const;
type FirstRequestClass = keyof typeof FIRST_REQUEST_TARGETS;

const classOf = (name: HandlerName): FirstRequestClass =>
  name === 'model-turn' ? 'model-turn' : name.startsWith('api-') ? 'API handler' : 'step';

/** One measured process: CPU of the import, of each module loaded ahead (breakdown only), of the request. */
interface Sample {
  readonly initMs: number;
  readonly preloads: ReadonlyArray<readonly [string, number]>;
  readonly requestMs: number;
  /** Side modules (file URLs) and Node built-ins (`node:zlib`, `node:fetch`) the request loaded first, when asked to list them. */
  readonly loaded?: readonly string[];
  readonly answer: unknown;
}

export interface FirstRequestRow {
  readonly handler: HandlerName;
  readonly handlerClass: FirstRequestClass;
  /** Median over the rounds of (init + request) over the mean of the references beside it. */
  readonly ratio: number;
  readonly ratios: readonly number[];
  readonly initMs: number;
  readonly requestMs: number;
  /** When the target is missed: median CPU of each part of the first request. */
  readonly breakdown?: ReadonlyArray<{ part: string; milliseconds: number }>;
}

export interface FirstRequestReport {
  readonly nodeVersion: string;
  readonly rounds: number;
  readonly reference: { initMs: number; requestMs: number };
  readonly rows: readonly FirstRequestRow[];
}

// The child: the Lambda runtime's streaming global, CPU time around the import and around the
// one invocation (process start-up is the same for every bundle), its answer as the last line.
// With LIST_LOADS set, a load hook lists the side modules the request loads (breakdown only).
const MEASURE_FIRST_REQUEST = `
import { builtinModules, createRequire, registerHooks } from 'node:module';
const chunks = [];
globalThis.awslambda = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: { from: (stream, prelude) => { chunks.push(JSON.stringify(prelude)); return stream; } },
};
const [bundle, eventText, preloadText] = process.argv.slice(1);
const event = JSON.parse(eventText);
const stream = { write: (chunk) => { chunks.push(String(chunk)); return true; }, end: (chunk) => { if (chunk) chunks.push(String(chunk)); }, on: () => stream, once: () => stream, setContentType: () => {} };
const context = { awsRequestId: 'bench', functionName: 'bench', getRemainingTimeInMillis: () => 60000 };
const cpu = () => { const used = process.cpuUsage(); return (used.user + used.system) / 1000; };
const require = createRequire(bundle);
const load = async (part) =>
  part === 'node:fetch' ? void globalThis.Headers : part.startsWith('node:') ? require(part) : import(part);
const started = cpu();
const { handler } = await import(bundle);
const imported = cpu();
const preloads = [];
for (const part of JSON.parse(preloadText)) { const before = cpu(); await load(part); preloads.push([part, cpu() - before]); }
const loaded = [];
const listing = Boolean(process.env.LIST_LOADS);
if (listing) registerHooks({ load(url, context, next) { if (url.includes('/node_modules/')) loaded.push(url); return next(url, context); } });
const builtinsBefore = listing ? new Set(process.moduleLoadList) : undefined;
// Profiled (BENCH_CPU_PROF_DIR): a 20 ms busy loop of this name marks where the request starts.
if (process.execArgv.includes('--cpu-prof')) (function countersignRequestStartsHere() { const end = performance.now() + 20; while (performance.now() < end); })();
const requested = cpu();
let answer;
try {
  const result = await handler(event, stream, context);
  answer = result === undefined ? { streamed: chunks.join('') } : result;
} catch (error) {
  answer = { error: String(error?.name) };
}
const answered = cpu();
// Node's own modules the request loaded first: public built-ins, and fetch's undici.
for (const entry of listing ? process.moduleLoadList.filter((entry) => !builtinsBefore.has(entry)) : []) {
  const name = entry.replace(/^NativeModule /, '');
  if (name === 'internal/deps/undici/undici') loaded.push('node:fetch');
  else if (entry.startsWith('NativeModule ') && builtinModules.includes(name)) loaded.push('node:' + name);
}
process.stdout.write('\\nMEASURED ' + JSON.stringify({ initMs: imported - started, preloads, requestMs: answered - requested, loaded, answer }) + '\\n');
process.exit(0);
`;

const REFERENCE_SOURCE = [
  "import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';",
  'const client = new DynamoDBClient({});',
  'export const handler = async () => {',
  '  const { Item } = await client.send(new GetItemCommand({ TableName: process.env.COUNTERSIGN_TABLE_NAME,',
  `    Key: { pk: { S: 'USERS' }, sk: { S: 'USER#${BENCH_USER_ID}' } } }));`,
  "  return { statusCode: Item ? 200 : 404, body: 'hello' };",
  '};',
  '',
].join('\n');

async function measureOnce(
  node: string,
  environment: Record<string, string>,
  entry: string,
  event: unknown,
  options: { preloads?: readonly string[]; listLoads?: boolean } = {},
): Promise<Sample> {
  const { stdout } = await run(
    node,
    [
      ...(process.env.BENCH_CPU_PROF_DIR && entry.endsWith('index.mjs')
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
        : []),
      '--input-type=module',
      '-e',
      MEASURE_FIRST_REQUEST,
      pathToFileURL(entry).href,
      JSON.stringify(event),
      JSON.stringify(options.preloads ?? []),
    ],
    {
      cwd: join(entry, '..'),
      env: { ...environment, ...(options.listLoads ? { LIST_LOADS: '1' } : {}) },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const line = stdout.split('\n').find((candidate) => candidate.startsWith('MEASURED '));
  if (!line) throw new Error(`no measurement from ${entry}: ${stdout.slice(-500)}`);
  return JSON.parse(line.slice('MEASURED '.length)) as Sample;
}

const total = (sample: Sample) => sample.initMs + sample.requestMs;

export async function measureFirstRequests(
  rounds = FIRST_REQUEST_ROUNDS,
  only: readonly HandlerName[] = HANDLER_NAMES,
  options: { breakdown?: 'missed' | 'all' } = {},
): Promise<FirstRequestReport> {
  const node = resolveRuntimeNode();
  const cache = resolveProjectPath('node_modules/.cache');
  await mkdir(cache, { recursive: true });
  // Inside node_modules: the reference resolves @aws-sdk/* there, as the Lambda runtime provides it.
  const directory = await mkdtemp(join(cache, 'countersign-first-request-'));
  const baseDirectory = await mkdtemp(join(tmpdir(), 'countersign-first-request-'));
  const kms = await startFakeKmsServer();
  const standIns = await startFirstRequestStandIns();
  const runtime = await startBenchRuntime(baseDirectory);
  let stopBridge = async () => {};
  try {
    // `npm run build`'s second step, into this folder: the bytes dist/assets/handlers ships.
    const handlersDirectory = join(directory, 'handlers');
    buildPrebuiltHandlers(esbuild, handlersDirectory);
    const reference = join(directory, 'hello-world-get-item.mjs');
    await writeFile(reference, REFERENCE_SOURCE);

    const dynamo = await startDynamoBridge(runtime.dynamo.client.config.requestHandler as SdkRequestHandler);
    stopBridge = dynamo.stop;
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const paths = await CallPaths.open(runtime, baseDirectory, {
      keyWrapping: createKmsKeyWrapping({
        keyArn: kms.keyArn,
        clientConfig: { endpoint: kms.endpoint, region: kms.region, credentials },
      }),
    });
    const fixtures = new FirstRequestFixtures(paths, standIns.issueToken);
    const { endedRunId } = await fixtures.prepareShared();
    const environment: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      AWS_REGION: kms.region,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_KMS: kms.endpoint,
      AWS_ENDPOINT_URL_SFN: standIns.awsJsonEndpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: standIns.awsJsonEndpoint,
      COUNTERSIGN_TABLE_NAME: runtime.dynamo.tableName,
      COUNTERSIGN_SEALING_KEY_ARN: kms.keyArn,
      // The deciding functions sign receipt entries (issue #25) with the fake KMS's P-256 key.
      COUNTERSIGN_RECEIPT_KEY_ARN: kms.signingKeyArn,
      COUNTERSIGN_OVERFLOW_BUCKET: 'countersign-bench-overflow',
      COUNTERSIGN_OVERFLOW_KEY_ARN: `arn:aws:kms:${kms.region}:111122223333:key/overflow`,
      COUNTERSIGN_STATE_MACHINE_ARN: `arn:aws:states:${kms.region}:111122223333:stateMachine:bench`,
      COUNTERSIGN_MODEL_PROVIDER: 'scripted',
      COUNTERSIGN_JWT_ISSUER: standIns.issuerUrl,
      COUNTERSIGN_JWT_AUDIENCE: BENCH_AUDIENCE,
      COUNTERSIGN_PRINCIPAL_QUOTAS: JSON.stringify(BENCH_PRINCIPAL_QUOTAS),
      POWERTOOLS_SERVICE_NAME: 'countersign',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    };
    const entryOf = (name: HandlerName) => join(handlersDirectory, name, 'index.mjs');
    const measureReference = () => measureOnce(node.path, environment, reference, {});
    const measureHandler = async (name: HandlerName, request: FirstRequest, options = {}) => {
      const sample = await measureOnce(node.path, environment, entryOf(name), request.event, options);
      const problem = request.check(sample.answer);
      if (problem) throw new Error(`${name}'s first request went wrong: ${problem}`);
      return sample;
    };

    const samples = new Map<HandlerName, Sample[]>(only.map((name) => [name, []]));
    const ratios = new Map<HandlerName, number[]>(only.map((name) => [name, []]));
    const referenceSamples: Sample[] = [];
    // Round 0 warms the file system cache (a Lambda's disk is warm) and is not counted.
    for (let round = 0; round <= rounds; round += 1) {
      const requests = await fixtures.prepareRound(endedRunId);
      const order = [...only.slice(round % only.length), ...only.slice(0, round % only.length)];
      let before = await measureReference();
      for (const name of order) {
        const sample = await measureHandler(name, requests[name]);
        const after = await measureReference();
        if (round > 0) {
          samples.get(name)?.push(sample);
          referenceSamples.push(after);
          ratios.get(name)?.push(total(sample) / ((total(before) + total(after)) / 2));
        }
        before = after;
      }
    }

    const ratioOf = (name: HandlerName) => median(ratios.get(name) ?? []);
    const toBreakDown = only.filter(
      (name) =>
        options.breakdown === 'all' ||
        (options.breakdown !== undefined && ratioOf(name) > FIRST_REQUEST_TARGETS[classOf(name)]),
    );
    const breakdowns = await breakDown(toBreakDown, handlersDirectory, fixtures, endedRunId, measureHandler);
    const rows: FirstRequestRow[] = only.map((name) => {
      const breakdown = breakdowns.get(name);
      return {
        handler: name,
        handlerClass: classOf(name),
        ratio: ratioOf(name),
        ratios: ratios.get(name) ?? [],
        initMs: median((samples.get(name) ?? []).map((sample) => sample.initMs)),
        requestMs: median((samples.get(name) ?? []).map((sample) => sample.requestMs)),
        ...(breakdown ? { breakdown } : {}),
      };
    });
    const { stdout: version } = await run(node.path, ['--version']);
    return {
      nodeVersion: `${version.trim()}${node.matchesRuntime ? '' : ' (NOT the Lambda runtime major)'}`,
      rounds,
      reference: {
        initMs: median(referenceSamples.map((sample) => sample.initMs)),
        requestMs: median(referenceSamples.map((sample) => sample.requestMs)),
      },
      rows,
    };
  } finally {
    await stopBridge();
    await runtime.stop();
    await Promise.all([kms.stop(), standIns.stop()]);
    await rm(directory, { recursive: true, force: true });
    await rm(baseDirectory, { recursive: true, force: true });
  }
}

/**
 * Which module's first use costs what: one process lists the side modules the request loads
 * (a load hook), then each sample loads them one by one before the request, timing each, so
 * the request's remainder is the handler's own code, its in-bundle clients and their I/O.
 */
async function breakDown(
  names: readonly HandlerName[],
  handlersDirectory: string,
  fixtures: FirstRequestFixtures,
  endedRunId: string,
  measureHandler: (name: HandlerName, request: FirstRequest, options?: object) => Promise<Sample>,
): Promise<Map<HandlerName, Array<{ part: string; milliseconds: number }>>> {
  const breakdowns = new Map<HandlerName, Array<{ part: string; milliseconds: number }>>();
  if (names.length === 0) return breakdowns;
  const preloads = new Map<HandlerName, string[]>();
  const listing = await fixtures.prepareRound(endedRunId);
  for (const name of names) {
    const listed = await measureHandler(name, listing[name], { listLoads: true });
    // Side modules beside the bundle and Node's own modules; nothing else loads on a request.
    preloads.set(
      name,
      (listed.loaded ?? []).filter(
        (part) => part.startsWith(pathToFileURL(handlersDirectory).href) || part.startsWith('node:'),
      ),
    );
  }
  const parts = new Map<HandlerName, Map<string, number[]>>(names.map((name) => [name, new Map()]));
  for (let sample = 0; sample < BREAKDOWN_SAMPLES; sample += 1) {
    const requests = await fixtures.prepareRound(endedRunId);
    for (const name of names) {
      const measured = await measureHandler(name, requests[name], { preloads: preloads.get(name) ?? [] });
      const add = (part: string, milliseconds: number) => {
        const handlerParts = parts.get(name);
        handlerParts?.set(part, [...(handlerParts.get(part) ?? []), milliseconds]);
      };
      add('bundle import (init)', measured.initMs);
      for (const [part, milliseconds] of measured.preloads) {
        const sideModule = part.slice(part.lastIndexOf('/node_modules/') + '/node_modules/'.length);
        const label =
          part === 'node:fetch' ? "Node's fetch (undici)" : part.startsWith('node:') ? part : sideModule;
        add(`first load of ${label}`, milliseconds);
      }
      add('request (handler code, in-bundle clients, I/O)', measured.requestMs);
    }
  }
  for (const [name, handlerParts] of parts) {
    breakdowns.set(
      name,
      [...handlerParts].map(([part, values]) => ({ part, milliseconds: median(values) })),
    );
  }
  return breakdowns;
}

/** The first-request table, targets and verdicts beside the ratios, and the breakdowns of misses. */
export function printFirstRequestTable(report: FirstRequestReport): void {
  console.log(
    `\nFirst request: CPU time of init + one representative request of the shipped handler folder (dist/assets/handlers), ${report.rounds} fresh processes per handler, each paired with a hello-world (DynamoDB client + one GetItem on the same dynalite) beside it, Node ${report.nodeVersion}`,
  );
  console.log(
    `${'handler'.padEnd(26)}${'x hello'.padStart(9)}${'range'.padStart(13)}${'init ms'.padStart(10)}${'request ms'.padStart(12)}  target`,
  );
  console.log('─'.repeat(100));
  console.log(
    `${'hello-world + GetItem'.padEnd(26)}${'1.00'.padStart(9)}${''.padStart(13)}${report.reference.initMs.toFixed(1).padStart(10)}${report.reference.requestMs.toFixed(1).padStart(12)}  reference`,
  );
  for (const row of report.rows) {
    const target = FIRST_REQUEST_TARGETS[row.handlerClass];
    const sorted = [...row.ratios].sort((a, b) => a - b);
    const range = `${(sorted[0] ?? Number.NaN).toFixed(2)}–${(sorted.at(-1) ?? Number.NaN).toFixed(2)}`;
    console.log(
      `${row.handler.padEnd(26)}${row.ratio.toFixed(2).padStart(9)}${range.padStart(13)}${row.initMs.toFixed(1).padStart(10)}${row.requestMs.toFixed(1).padStart(12)}  <= ${target.toFixed(1)}x (${row.handlerClass}): ${row.ratio <= target ? 'met' : 'MISSED'}`,
    );
    for (const { part, milliseconds } of row.breakdown ?? []) {
      console.log(`    ${part.padEnd(70)}${milliseconds.toFixed(1).padStart(8)} ms`);
    }
  }
  console.log(
    'x hello = median of the paired ratios (init + request over the mean of the references measured just before and after); range = lowest and highest round; ms = medians on this machine.',
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const [roundsArgument, ...handlers] = process.argv.slice(2);
  const breakdownAll = handlers.includes('--breakdown');
  const only = handlers.filter((name): name is HandlerName =>
    (HANDLER_NAMES as readonly string[]).includes(name),
  );
  printFirstRequestTable(
    await measureFirstRequests(
      Number(roundsArgument ?? FIRST_REQUEST_ROUNDS),
      only.length > 0 ? only : HANDLER_NAMES,
      {
        breakdown: breakdownAll ? 'all' : 'missed',
      },
    ),
  );
}
