/**
 * `npm run bench`: the cost table of countersign, offline, in a few minutes on two cores.
 *
 * For each operation: the AWS API calls it makes (counted by the SDK middleware
 * `AwsCallCounter`, with the local keyring counted as KMS, the local runner as Step Functions
 * and the notifier as EventBridge), local p50 and p99, and the targets beside them; then each
 * Lambda handler bundle's cold start (bench/cold-start.ts), its init with its first request
 * (bench/first-request.ts) and the cost of sealing (bench/sealing-cost.ts), as ratios to
 * references measured in the same run.
 * Every step runs as a cold Lambda container would (fresh handlers, an empty key cache).
 */
// Node 20 is this project's floor; the SDK's notice about its own future floor is noise in a benchmark.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { INBOX_SHARDS_DEFAULT } from '../lambdas/contract/table-layout.js';
import { resolveCalls } from '../lambdas/core/approvals/resolve-calls.js';
import type { UserProfile } from '../lambdas/core/identity.js';
import { silentLogger } from '../lambdas/core/ports.js';
import { capturePreviews } from '../lambdas/core/previews/capture-previews.js';
import { defineTool, type Tool, ToolRegistry } from '../lambdas/core/tools/tool.js';
import { CallPaths, FIVE_PREVIEWING_CALLS, ONE_PREVIEWING_CALL, startBenchRuntime } from './call-paths.js';
import { measureColdStarts, printColdStartTable } from './cold-start.js';
import { measureFirstRequests, printFirstRequestTable } from './first-request.js';
import { measureHostileInputs } from './hostile-inputs.js';
import { measureSealingCost, printSealingTable } from './sealing-cost.js';
import { benchmarkComposeSkills } from './skill-set.js';

/** Runs per measured run operation (the issue asks for at least 200). */
const RUNS = 200;
/** Waiting runs behind the inbox (issue #3), and first-page loads measured over them. */
const WAITING_RUNS = 1_000;
const INBOX_LOADS = 50;
const INBOX_PAGE_SIZE = 20;

type Snapshot = Record<string, number>;

interface Measurement {
  readonly operation: string;
  readonly durationsMs: number[];
  /** Every distinct set of calls the samples made, with how many samples made it. */
  readonly variants: Map<string, { readonly calls: Snapshot; samples: number }>;
  target?: {
    readonly text: string;
    readonly met: (calls: Snapshot, durationsMs: readonly number[]) => boolean;
  };
}

async function main(): Promise<void> {
  const startedAt = performance.now();
  const baseDirectory = await mkdtemp(join(tmpdir(), 'countersign-bench-'));
  const runtime = await startBenchRuntime(baseDirectory);
  try {
    const paths = await CallPaths.open(runtime, baseDirectory);
    const measured = (operation: string, target?: Measurement['target']): Measurement => ({
      operation,
      durationsMs: [],
      variants: new Map(),
      ...(target ? { target } : {}),
    });
    const sample = async <T>(measurement: Measurement, work: () => Promise<T>): Promise<T> => {
      runtime.calls.reset();
      const started = performance.now();
      const result = await work();
      measurement.durationsMs.push(performance.now() - started);
      const calls = runtime.calls.snapshot();
      const variant = measurement.variants.get(JSON.stringify(calls));
      if (variant) variant.samples += 1;
      else measurement.variants.set(JSON.stringify(calls), { calls, samples: 1 });
      return result;
    };

    const start = measured('start run (POST /runs)');
    const suspend = measured('suspend (AwaitApproval, 1 previewing call)', {
      // Reads: the run, its card and the turn's decision together, then the owner (issue #26 gave
      // up batching them: one round trip, no read capacity). Writes: the card and the run (issue
      // #2), the card's inbox entry in its route (issue #16), its outbox marked sent (issue #29).
      text: '<= 4 DynamoDB reads + 1 per previewing call, <= 2 writes + 1 inbox entry + 1 outbox mark, <= 1 KMS call',
      met: (calls) => reads(calls) <= 4 + 1 && writes(calls) <= 2 + 1 + 1 && service(calls, 'KMS') <= 1,
    });
    const resume = measured('resume (POST /runs/{id}/decision, approve)', {
      text: '<= 1 DynamoDB read (+1: the approver, read on every API request), <= 1 KMS call',
      met: (calls) => reads(calls) <= 1 + 1 && service(calls, 'KMS') <= 1,
    });
    const execute = measured('execute (ExecuteTools, 1 approved call)', {
      // The call ledger (issue #29): one query of the turn's calls, a write before and after the call.
      text: '1 ledger query + 2 ledger writes per approved call, <= 1 KMS call',
      met: (calls) =>
        (calls['DynamoDB:Query'] ?? 0) === 1 &&
        (calls['DynamoDB:PutItem'] ?? 0) === 2 &&
        service(calls, 'KMS') <= 1,
    });
    const suspendFive = measured('suspend, 5 previewing calls (issue #4)', {
      text: '<= 4 DynamoDB reads + 1 per previewing call (<= 9), <= 2 writes + 1 inbox entry + 1 outbox mark, <= 1 KMS call',
      met: (calls) => reads(calls) <= 4 + 5 && writes(calls) <= 2 + 1 + 1 && service(calls, 'KMS') <= 1,
    });

    for (let index = 0; index < RUNS; index += 1) {
      const runId = await sample(start, () => paths.startRun(ONE_PREVIEWING_CALL));
      const reply = await paths.runToModelReply(runId);
      await sample(suspend, () => paths.suspend(runId, reply));
      const digest = await paths.digestOf(runId);
      const answer = await sample(resume, () => paths.decide(runId, digest));
      if (answer.statusCode !== 200) throw new Error(`a decision answered ${answer.statusCode}`);
      await sample(execute, () => paths.execute(runId, reply.turn));
    }
    // These runs stay waiting: they are the newest part of the inbox's queue.
    for (let index = 0; index < RUNS; index += 1) {
      const runId = await paths.startRun(FIVE_PREVIEWING_CALLS);
      const reply = await paths.runToModelReply(runId);
      await sample(suspendFive, () => paths.suspend(runId, reply));
    }

    await paths.fillWaitingRuns(WAITING_RUNS - RUNS);
    const inbox = measured(
      `inbox first page of ${INBOX_PAGE_SIZE}, ${WAITING_RUNS} waiting runs (issue #3)`,
      {
        text: 'DynamoDB reads independent of the queue length, KMS calls not growing with the cards',
        // One query per shard of the approvers' route, whatever the viewer's groups (issue #27)
        // plus the pre-sharding partition, whatever the queue; KMS bounded by the sealing keys on the page.
        met: (calls) =>
          (calls['DynamoDB:Query'] ?? 0) === INBOX_SHARDS_DEFAULT + 1 &&
          service(calls, 'KMS') < INBOX_PAGE_SIZE,
      },
    );
    for (let index = 0; index < INBOX_LOADS; index += 1) {
      const answer = await sample(inbox, () => paths.loadInbox(INBOX_PAGE_SIZE));
      if (answer.statusCode !== 200 || answer.json?.cards?.length !== INBOX_PAGE_SIZE) {
        throw new Error(`the inbox answered ${answer.statusCode} with ${answer.json?.cards?.length} cards`);
      }
    }

    // ── Skill composition (issue #5): 200 skills of 24 KB, a pure function (no AWS calls). ─────
    const skillRows: Measurement[] = [
      measureSkillComposition('compose 200 skills x 24 KB, default budget (24,000 B)', 24_000),
      measureSkillComposition('compose 200 skills x 24 KB, budget fits all (6 MB)', 6_000_000),
    ];
    // ─────────────────────────────────────────────────────────────────────────────────────────
    const floodRow = await measureFloodedPreviewCapture();
    const hostileRows: Measurement[] = (await measureHostileInputs()).map(({ operation, durationsMs }) => ({
      operation,
      durationsMs,
      variants: new Map([['none', { calls: {}, samples: durationsMs.length }]]),
      target: {
        text: 'p99 < 1,000 ms (two cores)',
        met: (_calls, durations) => percentile(durations, 99) < 1_000,
      },
    }));

    printTable([start, suspend, resume, execute, suspendFive, inbox, ...skillRows, floodRow, ...hostileRows]);
    printColdStartTable(await measureColdStarts());
    printFirstRequestTable(await measureFirstRequests());
    printSealingTable(await measureSealingCost());
    console.log(`\nFinished in ${((performance.now() - startedAt) / 1000).toFixed(1)} s.`);
  } finally {
    await runtime.stop();
    await rm(baseDirectory, { recursive: true, force: true });
  }
}

function reads(calls: Snapshot): number {
  return ['GetItem', 'BatchGetItem', 'Query', 'Scan'].reduce(
    (total, operation) => total + (calls[`DynamoDB:${operation}`] ?? 0),
    0,
  );
}

function writes(calls: Snapshot): number {
  return ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'].reduce(
    (total, operation) => total + (calls[`DynamoDB:${operation}`] ?? 0),
    0,
  );
}

function service(calls: Snapshot, name: string): number {
  return Object.entries(calls)
    .filter(([key]) => key.startsWith(`${name}:`))
    .reduce((total, [, count]) => total + count, 0);
}

/** Times `benchmarkComposeSkills` 50 times; its calls are none, by construction. */
function measureSkillComposition(operation: string, maxBytes: number): Measurement {
  const durationsMs: number[] = [];
  let summary = '';
  for (let sample = 0; sample < 50; sample += 1) {
    const { milliseconds, composition } = benchmarkComposeSkills({ maxBytes });
    durationsMs.push(milliseconds);
    summary = `${composition.included.length} included, ${composition.dropped.length} dropped`;
  }
  return {
    operation: `${operation}: ${summary}`,
    durationsMs,
    variants: new Map([['none', { calls: {}, samples: durationsMs.length }]]),
  };
}

/**
 * Issue #9: a preview that returns 100,000 lines of 10,000 characters, captured (the tool's
 * answer plus the trimming) 20 times; the whole capture is the time the event loop is held.
 */
async function measureFloodedPreviewCapture(): Promise<Measurement> {
  const line = `${'flood '.repeat(1_666)}end`;
  const tool = defineTool({
    name: 'flooding_write',
    description: 'A preview of 100,000 lines of 10,000 characters.',
    effect: 'write',
    input: z.object({}),
    execute: async () => ({ content: 'ok', isError: false }),
    preview: async () => new Array<string>(100_000).fill(line),
  });
  const tools = new ToolRegistry([tool as Tool]);
  const actingUser: UserProfile = {
    userId: 'bench',
    displayName: 'Bench',
    grants: [],
    pageAccess: '*',
    languageAccess: '*',
    toolAccess: [],
  };
  const durationsMs: number[] = [];
  let kept = 0;
  for (let sample = 0; sample < 20; sample += 1) {
    const started = performance.now();
    const [previewed] = await capturePreviews({
      calls: resolveCalls(
        [{ index: 0, callId: 'call-0', tool: 'flooding_write', arguments: {}, offered: true }],
        tools,
      ),
      actingUser,
      context: {
        actingUser,
        runId: 'bench',
        pages: undefined as never,
      },
      logger: silentLogger,
    });
    durationsMs.push(performance.now() - started);
    kept = previewed?.preview?.lines.length ?? 0;
  }
  return {
    operation: `preview capture, 100,000 lines x 10,000 chars (${kept} kept, #9)`,
    durationsMs,
    variants: new Map([['none', { calls: {}, samples: durationsMs.length }]]),
    target: {
      text: 'p99 < 1,000 ms (two cores)',
      met: (_calls, durations) => percentile(durations, 99) < 1_000,
    },
  };
}

/** Nearest-rank percentile. */
function percentile(values: readonly number[], rank: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((rank / 100) * sorted.length) - 1)] ?? Number.NaN;
}

function printTable(measurements: readonly Measurement[]): void {
  console.log('\ncountersign bench: local embedded mode (dynalite in memory; local keyring counted as KMS,');
  console.log('local runner as SFN, notifier as EventBridge); every step runs as a cold Lambda container.\n');
  console.log(`${'operation'.padEnd(62)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'n'.padStart(6)}`);
  console.log('─'.repeat(86));
  for (const measurement of measurements) {
    const n = measurement.durationsMs.length;
    console.log(
      `${measurement.operation.padEnd(62)}${percentile(measurement.durationsMs, 50).toFixed(2).padStart(9)}${percentile(measurement.durationsMs, 99).toFixed(2).padStart(9)}${String(n).padStart(6)}`,
    );
    for (const { calls, samples } of measurement.variants.values()) {
      const share = measurement.variants.size === 1 ? '' : ` (${samples} of ${n} samples)`;
      console.log(`    AWS calls: ${formatCallCounts(calls)}${share}`);
      const summary = `${reads(calls)} reads, ${writes(calls)} writes, ${service(calls, 'KMS')} KMS`;
      if (measurement.target) {
        const verdict = measurement.target.met(calls, measurement.durationsMs) ? 'met' : 'MISSED';
        console.log(`    target:    ${measurement.target.text}: ${verdict} (${summary})`);
      } else {
        console.log(`    target:    none set (${summary})`);
      }
    }
  }
}

/** `DynamoDB GetItem 2, PutItem 1 | KMS Decrypt 1`. */
function formatCallCounts(calls: Snapshot): string {
  const byService = new Map<string, string[]>();
  for (const [key, count] of Object.entries(calls)) {
    const [name = key, operation = ''] = key.split(':');
    byService.set(name, [...(byService.get(name) ?? []), `${operation} ${count}`]);
  }
  if (byService.size === 0) return 'none';
  return [...byService.entries()].map(([name, operations]) => `${name} ${operations.join(', ')}`).join(' | ');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
