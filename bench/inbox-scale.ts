/**
 * `npm run bench:scale [-- --cards 100000 --reference 1000]`: the inbox at organisation scale
 * (issues #16, #27). Writes waiting cards through the run repository into dynalite in this
 * process (not the whole run flow: no model, no sealing), routed over ten approver groups, then
 * measures one inbox page read (`listWaitingCards`, the repository read behind GET /inbox) for an
 * approver in one group, one in three and one in ten: the first page and page 100, AWS calls per
 * page and p50/p99, beside the same at the reference size. Targets: equal calls at both sizes,
 * time ratio <= 1.5 (issue #16); equal Queries per page at 1 and 10 groups (issue #27).
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { AwsCallCounter } from '../lambdas/adapters/aws-call-counter.js';
import { DynamoRunRepository } from '../lambdas/adapters/dynamo/run-repository.js';
import type { InboxRouting } from '../lambdas/core/approvals/card-routing.js';
import { STORED_CARD_SCHEMA_VERSION, type StoredCard } from '../lambdas/core/approvals/stored-card.js';
import { startLocalDynamo } from '../lambdas/local/local-dynamo.js';

const GROUPS = Array.from({ length: 10 }, (_unused, index) => `g${index}`);
const PAGE_SIZE = 20;
const DEEP_PAGE = 100;
const LOADS = 40;
const WARM_UP_LOADS = 10;
const WRITERS = 16;
const SHARDS = 4;

const VIEWERS: ReadonlyArray<{ name: string; routing: InboxRouting }> = [
  { name: 'one group', routing: { kind: 'groups', groups: GROUPS.slice(0, 1) } },
  { name: 'three groups', routing: { kind: 'groups', groups: GROUPS.slice(0, 3) } },
  { name: 'ten groups', routing: { kind: 'groups', groups: GROUPS } },
];

interface Row {
  cards: number;
  viewer: string;
  page: number;
  calls: string;
  callCount: number;
  queries: number;
  p50: number;
  p99: number;
}

const { values: flags } = parseArgs({
  options: { cards: { type: 'string' }, reference: { type: 'string' } },
  strict: true,
});

function readFlag(name: keyof typeof flags, fallback: number): number {
  const text = flags[name];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} needs a whole number of cards.`);
  return value;
}

function cardOf(index: number): StoredCard {
  return {
    schemaVersion: STORED_CARD_SCHEMA_VERSION,
    runId: `run-${String(index).padStart(7, '0')}`,
    owner: 'editor',
    label: `Run ${index}`,
    configurationId: 'default',
    turn: 1,
    digest: 'a'.repeat(64),
    pausedAt: new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString(),
    expiresAt: '2026-12-31T00:00:00.000Z',
    toolNames: ['update_page_metadata'],
    writeToolNames: ['update_page_metadata'],
    fourEyes: false,
    revealRejectionReason: false,
    approverGroups: [GROUPS[index % GROUPS.length] ?? 'g0'],
    state: 'open',
    // About the size of a one-call card sealed with its token.
    sealedCard: new Uint8Array(1_200).fill(index % 251),
    sealedToken: new Uint8Array(300).fill(7),
  };
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

async function measureSize(cards: number): Promise<Row[]> {
  const dynamo = await startLocalDynamo({ tableName: `countersign-scale-${cards}` });
  const counter = new AwsCallCounter();
  counter.attachTo(dynamo.client);
  const runs = new DynamoRunRepository({
    client: dynamo.documentClient,
    tableName: dynamo.tableName,
    inboxShards: SHARDS,
  });
  try {
    const writeStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (next < cards) {
          const index = next;
          next += 1;
          await runs.putCard(cardOf(index));
        }
      }),
    );
    const seconds = (performance.now() - writeStart) / 1000;
    console.log(`${cards} cards written in ${seconds.toFixed(1)} s (${Math.round(cards / seconds)} cards/s)`);

    const rows: Row[] = [];
    for (const viewer of VIEWERS) {
      // The cursor of page 100, walked to once; then each page is loaded LOADS times.
      let cursor: string | undefined;
      const cursors = new Map<number, string | undefined>([[1, undefined]]);
      for (let page = 1; page < DEEP_PAGE; page += 1) {
        const answer = await runs.listWaitingCards({
          limit: PAGE_SIZE,
          routing: viewer.routing,
          ...(cursor ? { cursor } : {}),
        });
        cursor = answer.cursor;
        if (cursor === undefined) break;
        if (page + 1 === DEEP_PAGE) cursors.set(DEEP_PAGE, cursor);
      }
      for (const [page, pageCursor] of cursors) {
        const times: number[] = [];
        let snapshot: Record<string, number> = {};
        let shown = 0;
        // Untimed loads first: the size measured first must not pay the process's JIT warm-up.
        for (let load = 0; load < WARM_UP_LOADS; load += 1) {
          await runs.listWaitingCards({
            limit: PAGE_SIZE,
            routing: viewer.routing,
            ...(pageCursor ? { cursor: pageCursor } : {}),
          });
        }
        for (let load = 0; load < LOADS; load += 1) {
          counter.reset();
          const start = performance.now();
          const answer = await runs.listWaitingCards({
            limit: PAGE_SIZE,
            routing: viewer.routing,
            ...(pageCursor ? { cursor: pageCursor } : {}),
          });
          times.push(performance.now() - start);
          snapshot = counter.snapshot();
          shown = answer.cards.length;
        }
        if (shown !== PAGE_SIZE) throw new Error(`page ${page} for ${viewer.name} showed ${shown} cards`);
        times.sort((left, right) => left - right);
        rows.push({
          cards,
          viewer: viewer.name,
          page,
          calls: Object.entries(snapshot)
            .map(([operation, count]) => `${operation.replace('DynamoDB:', '')} ${count}`)
            .join(', '),
          callCount: Object.values(snapshot).reduce((sum, count) => sum + count, 0),
          queries: snapshot['DynamoDB:Query'] ?? 0,
          p50: percentile(times, 0.5),
          p99: percentile(times, 0.99),
        });
      }
    }
    return rows;
  } finally {
    await dynamo.stop();
  }
}

async function main(): Promise<void> {
  const cards = readFlag('cards', 100_000);
  const reference = readFlag('reference', 1_000);
  const referenceRows = await measureSize(reference);
  const scaleRows = await measureSize(cards);
  console.log(`\n| cards | approver | page | AWS calls per page | p50 ms | p99 ms |`);
  console.log('|---:|---|---:|---|---:|---:|');
  for (const row of [...referenceRows, ...scaleRows]) {
    console.log(
      `| ${row.cards} | ${row.viewer} | ${row.page} | ${row.calls} | ${row.p50.toFixed(1)} | ${row.p99.toFixed(1)} |`,
    );
  }
  console.log(`\nAgainst the first page at ${reference} cards (target: equal calls, p50 ratio <= 1.5):`);
  let met = true;
  for (const row of scaleRows) {
    const base = referenceRows.find((candidate) => candidate.viewer === row.viewer && candidate.page === 1);
    if (!base) continue;
    const ratio = row.p50 / base.p50;
    const equalCalls = row.callCount === base.callCount;
    met &&= equalCalls && ratio <= 1.5;
    console.log(
      `  ${row.viewer}, page ${row.page} at ${row.cards}: calls ${row.callCount} vs ${base.callCount} (${equalCalls ? 'equal' : 'DIFFERENT'}), p50 ratio ${ratio.toFixed(2)} ${ratio <= 1.5 ? 'ok' : 'MISSED'}`,
    );
  }
  console.log("\nQueries per page by the approver's groups (target: equal at 1 and 10 groups):");
  for (const row of [...referenceRows, ...scaleRows].filter(
    (candidate) => candidate.viewer === 'one group',
  )) {
    const ten = [...referenceRows, ...scaleRows].find(
      (candidate) =>
        candidate.viewer === 'ten groups' && candidate.cards === row.cards && candidate.page === row.page,
    );
    const three = [...referenceRows, ...scaleRows].find(
      (candidate) =>
        candidate.viewer === 'three groups' && candidate.cards === row.cards && candidate.page === row.page,
    );
    const equal = ten !== undefined && ten.queries === row.queries;
    met &&= equal;
    console.log(
      `  ${row.cards} cards, page ${row.page}: 1 group ${row.queries}, 3 groups ${three?.queries ?? '-'}, 10 groups ${ten?.queries ?? '-'} (${equal ? 'equal' : 'DIFFERENT'})`,
    );
  }
  console.log(met ? '\nTargets met.' : '\nTargets missed (see above).');
}

await main();
