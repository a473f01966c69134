/**
 * The cold-start part of `npm run bench` (issue #12): the module init of every deployed handler
 * bundle, measured as the Lambda runtime pays it, in fresh Node processes on the runtime's Node
 * major, paired in the same rounds against two hello-world bundles so the figure is a ratio
 * that holds on other machines. `npx tsx bench/cold-start.ts` runs it alone.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { buildSideModules, createEsbuildOptions, LAMBDA_RUNTIME } from '../lib/functions.js';
import { resolveProjectPath } from '../lib/project-path.js';

const run = promisify(execFile);

/** Fresh processes per bundle; the issue asks for at least 10. */
export const COLD_START_ROUNDS = 21;

/** Targets as ratios to the one-client hello-world (issue #12). */
export const COLD_START_TARGETS = {
  'never unseals': 1.2,
  unseals: 1.5,
  'model-turn': 1.8,
} as const;

export type HandlerClass = keyof typeof COLD_START_TARGETS;

export interface ColdStartRow {
  readonly bundle: string;
  readonly bytes: number;
  readonly medianMs: number;
  /**
   * Median over the rounds of the paired ratio: this bundle's init over the mean of the
   * one-client hello-world's inits measured just before and just after it.
   */
  readonly ratio: number;
  readonly ratioToHelloWorld: number;
  /** Undefined for the reference bundles. */
  readonly handlerClass?: HandlerClass;
}

export interface ColdStartReport {
  readonly nodeVersion: string;
  readonly rounds: number;
  readonly rows: readonly ColdStartRow[];
}

const HELLO_WORLD = 'hello-world';
const HELLO_WORLD_DYNAMODB = 'hello-world + DynamoDBClient';

/**
 * The two references. Both leave the SDK to the runtime, as a hand-written Lambda does: the
 * floor a handler is compared with is what the runtime offers anyone for free.
 */
const REFERENCE_SOURCES: Record<string, string> = {
  [HELLO_WORLD]: 'export const handler = async () => ({ statusCode: 200, body: "hello" });\n',
  [HELLO_WORLD_DYNAMODB]: [
    "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
    'const client = new DynamoDBClient({});',
    'export const handler = async () => ({ statusCode: 200, body: String(client.config.apiVersion) });',
    '',
  ].join('\n'),
};

/**
 * The Node binary of the Lambda runtime's major: this process when it is one, else the `node`
 * package's binary (a devDependency), else this process with the mismatch printed.
 */
export function resolveRuntimeNode(): { path: string; matchesRuntime: boolean } {
  const major = LAMBDA_RUNTIME.name.replace(/^nodejs(\d+)\.x$/, '$1');
  if (process.versions.node.split('.')[0] === major) return { path: process.execPath, matchesRuntime: true };
  const packaged = resolveProjectPath('node_modules/node/bin/node');
  if (existsSync(packaged)) return { path: packaged, matchesRuntime: true };
  return { path: process.execPath, matchesRuntime: false };
}

/** Every Lambda entry: a file in lambdas/handlers/ that exports `handler`. */
export async function listHandlerEntries(): Promise<string[]> {
  const directory = resolveProjectPath('lambdas/handlers');
  const files = (await readdir(directory)).filter((file) => file.endsWith('.ts')).sort();
  const entries: string[] = [];
  for (const file of files) {
    if (/^export const handler\b/m.test(await readFile(join(directory, file), 'utf8'))) entries.push(file);
  }
  return entries;
}

interface BuiltBundle {
  readonly name: string;
  readonly path: string;
  readonly bytes: number;
  readonly handlerClass?: HandlerClass;
}

/** Bundles the handlers with the deployed settings and the references, into `directory`. */
async function buildBundles(directory: string): Promise<BuiltBundle[]> {
  const toolsModule = resolveProjectPath('lambdas/tools/no-team-tools.ts');
  const handlersDirectory = resolveProjectPath('lambdas/handlers');
  const bundles: BuiltBundle[] = [];
  for (const [name, source] of Object.entries(REFERENCE_SOURCES)) {
    const entry = join(directory, `${name.replace(/\W+/g, '-')}.mjs`);
    await writeFile(entry, source);
    const result = await build({
      ...createEsbuildOptions(entry, toolsModule),
      external: ['@aws-sdk/*'],
      outfile: join(directory, `${name.replace(/\W+/g, '-')}.bundle.mjs`),
      metafile: true,
    });
    bundles.push({
      name,
      path: Object.keys(result.metafile.outputs)[0] ?? '',
      bytes: sizeOf(result.metafile),
    });
  }
  for (const file of await listHandlerEntries()) {
    const name = file.replace(/\.ts$/, '');
    const outfile = join(directory, `${name}.mjs`);
    const result = await build({
      ...createEsbuildOptions(join(handlersDirectory, file), toolsModule),
      outfile,
      metafile: true,
    });
    // What deploys beside the bundle (model-turn's tokenizer), loaded only when used.
    await buildSideModules(directory, await readFile(outfile, 'utf8'), toolsModule);
    // A handler unseals when its bundle carries the Encryption SDK (and with it a KMS client).
    const unseals = Object.values(result.metafile.outputs).some((output) =>
      Object.keys(output.inputs).some((input) => input.endsWith('lambdas/adapters/envelope-sealer.ts')),
    );
    const handlerClass: HandlerClass =
      name === 'model-turn' ? 'model-turn' : unseals ? 'unseals' : 'never unseals';
    bundles.push({ name, path: outfile, bytes: sizeOf(result.metafile), handlerClass });
  }
  return bundles;
}

function sizeOf(metafile: { outputs: Record<string, { bytes: number }> }): number {
  return Object.values(metafile.outputs).reduce((total, output) => total + output.bytes, 0);
}

// The child measures the import alone (process start-up is the same for every bundle), in CPU
// time: init is CPU-bound, and on a shared machine wall time measures the neighbours too.
const MEASURE_IMPORT = [
  'globalThis.awslambda = { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } };',
  'const started = process.cpuUsage();',
  'await import(process.argv[1]);',
  'const used = process.cpuUsage(started);',
  'process.stdout.write(String((used.user + used.system) / 1000));',
].join('\n');

async function measureOnce(node: string, bundlePath: string): Promise<number> {
  const { stdout } = await run(
    node,
    ['--input-type=module', '-e', MEASURE_IMPORT, pathToFileURL(bundlePath).href],
    {
      env: {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'us-east-1',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
    },
  );
  const milliseconds = Number(stdout);
  if (!Number.isFinite(milliseconds)) throw new Error(`no init time from ${bundlePath}: ${stdout}`);
  return milliseconds;
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

/**
 * Builds every bundle inside node_modules (so the references resolve `@aws-sdk/*` there, as the
 * runtime provides it), then measures `rounds` rounds; each round imports every bundle once in a
 * fresh process, in a rotated order, with the one-client reference imported between every two
 * of them. A handler's ratio in a round is its init over the mean of the two reference inits
 * beside it, and the table shows the median of those paired ratios: load on a shared machine
 * comes and goes within seconds, and a ratio of the medians taken over a whole round (the
 * first bench) let it fall on the handlers and not on the reference (runs 2 and 3 missed).
 */
export async function measureColdStarts(rounds = COLD_START_ROUNDS): Promise<ColdStartReport> {
  const node = resolveRuntimeNode();
  const cache = resolveProjectPath('node_modules/.cache');
  await mkdir(cache, { recursive: true });
  const directory = await mkdtemp(join(cache, 'countersign-cold-start-'));
  try {
    const bundles = await buildBundles(directory);
    const samples = new Map<string, number[]>(bundles.map((bundle) => [bundle.name, []]));
    const pairedRatios = new Map<string, number[]>(bundles.map((bundle) => [bundle.name, []]));
    const referenceBundle = bundles.find((bundle) => bundle.name === HELLO_WORLD_DYNAMODB);
    if (!referenceBundle) throw new Error('the one-client reference bundle was not built');
    const others = bundles.filter((bundle) => bundle !== referenceBundle);
    // One unmeasured pass warms the file system cache, as a Lambda's local disk is warm.
    for (const bundle of bundles) await measureOnce(node.path, bundle.path);
    for (let round = 0; round < rounds; round += 1) {
      const order = [...others.slice(round % others.length), ...others.slice(0, round % others.length)];
      let before = await measureOnce(node.path, referenceBundle.path);
      samples.get(referenceBundle.name)?.push(before);
      for (const bundle of order) {
        const init = await measureOnce(node.path, bundle.path);
        const after = await measureOnce(node.path, referenceBundle.path);
        samples.get(bundle.name)?.push(init);
        samples.get(referenceBundle.name)?.push(after);
        pairedRatios.get(bundle.name)?.push(init / ((before + after) / 2));
        before = after;
      }
    }
    const medianOf = (name: string) => median(samples.get(name) ?? []);
    const floor = medianOf(HELLO_WORLD);
    const { stdout: version } = await run(node.path, ['--version']);
    return {
      nodeVersion: `${version.trim()}${node.matchesRuntime ? '' : ` (NOT the Lambda runtime's ${LAMBDA_RUNTIME.name})`}`,
      rounds,
      rows: bundles.map((bundle) => ({
        bundle: bundle.name,
        bytes: bundle.bytes,
        medianMs: medianOf(bundle.name),
        ratio: bundle === referenceBundle ? 1 : median(pairedRatios.get(bundle.name) ?? []),
        ratioToHelloWorld: medianOf(bundle.name) / floor,
        ...(bundle.handlerClass ? { handlerClass: bundle.handlerClass } : {}),
      })),
    };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** The cold-start table, targets and verdicts beside the ratios. */
export function printColdStartTable(report: ColdStartReport): void {
  console.log(
    `\nCold start: module init CPU time (import of the deployed bundle), ${report.rounds} fresh processes per bundle, each paired with the one-client reference beside it, Node ${report.nodeVersion}`,
  );
  console.log(
    `${'bundle'.padEnd(30)}${'KB'.padStart(8)}${'x 1-client'.padStart(12)}${'x hello'.padStart(9)}${'ms (this machine)'.padStart(19)}  target`,
  );
  console.log('─'.repeat(110));
  for (const row of report.rows) {
    const target = row.handlerClass ? COLD_START_TARGETS[row.handlerClass] : undefined;
    const verdict =
      target === undefined
        ? 'reference'
        : `<= ${target.toFixed(1)}x (${row.handlerClass}): ${row.ratio <= target ? 'met' : 'MISSED'}`;
    console.log(
      `${row.bundle.padEnd(30)}${(row.bytes / 1000).toFixed(1).padStart(8)}${row.ratio.toFixed(2).padStart(12)}${row.ratioToHelloWorld.toFixed(2).padStart(9)}${row.medianMs.toFixed(1).padStart(19)}  ${verdict}`,
    );
  }
  console.log(
    'x 1-client = median of the paired ratios to the hello-world importing @aws-sdk/client-dynamodb (SDK from the runtime, as a hand-written Lambda) measured just before and after; ms = median init; KB = 1,000 bytes, information only.',
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rounds = Number(process.argv[2] ?? COLD_START_ROUNDS);
  printColdStartTable(await measureColdStarts(rounds));
}
