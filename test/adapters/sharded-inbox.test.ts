import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import {
  inboxPageFilterOf,
  inboxPartition,
  partitionsOf,
} from '../../lambdas/adapters/dynamo/inbox-index.js';
import { queryInboxPage } from '../../lambdas/adapters/dynamo/inbox-page-query.js';
import { DynamoRunRepository } from '../../lambdas/adapters/dynamo/run-repository.js';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import type { InboxRouting } from '../../lambdas/core/approvals/card-routing.js';
import type { StoredCard } from '../../lambdas/core/approvals/stored-card.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';
import { makeStoredCard } from '../support/stored-run-fixtures.js';

const SHARDS = 4;

function makeCard(runId: string, second: number, approverGroups?: string[]): StoredCard {
  return makeStoredCard(runId, {
    turn: 1,
    pausedAt: new Date(Date.UTC(2026, 2, 1, 10) + second * 1000).toISOString(),
    toolNames: ['update_page_metadata'],
    revealRejectionReason: false,
    sealedCard: Uint8Array.from([1]),
    sealedToken: Uint8Array.from([2]),
    ...(approverGroups ? { approverGroups } : {}),
  });
}

/** Every page of a viewer's inbox; `between` runs after each page, before the next is read. */
async function readAllPages(
  runs: DynamoRunRepository,
  routing: InboxRouting,
  limit: number,
  between: (pageNumber: number) => Promise<void> = async () => {},
): Promise<StoredCard[]> {
  const seen: StoredCard[] = [];
  let cursor: string | undefined;
  let pageNumber = 0;
  do {
    const page = await runs.listWaitingCards({ limit, routing, ...(cursor ? { cursor } : {}) });
    expect(page.cards.length).toBeLessThanOrEqual(limit);
    seen.push(...page.cards);
    cursor = page.cursor;
    pageNumber += 1;
    await between(pageNumber);
  } while (cursor !== undefined && pageNumber < 1000);
  return seen;
}

const groupsOf = (index: number): string[] | undefined =>
  [['alpha'], ['beta'], ['alpha', 'beta'], undefined][index % 4];

describe('the sharded inbox index (4 shards, 200 cards)', () => {
  let dynamo: RunningDynalite;
  let runs: DynamoRunRepository;
  let counter: AwsCallCounter;

  beforeAll(async () => {
    dynamo = await startDynalite();
    counter = new AwsCallCounter();
    counter.attachTo(dynamo.client);
    runs = new DynamoRunRepository({
      client: dynamo.documentClient,
      tableName: dynamo.tableName,
      inboxShards: SHARDS,
    });
    for (let index = 0; index < 200; index += 1) {
      const groups = groupsOf(index);
      await runs.putCard(makeCard(`run-${index}`, index, groups));
    }
  });
  afterAll(() => dynamo.stop());

  it('spreads the cards over every shard of a route', async () => {
    // Act
    const counts = await Promise.all(
      Array.from({ length: SHARDS }, async (_unused, shard) => {
        const output = await dynamo.documentClient.send(
          new QueryCommand({
            TableName: dynamo.tableName,
            IndexName: TABLE_LAYOUT.inboxIndex.name,
            KeyConditionExpression: '#pk = :partition',
            ExpressionAttributeNames: { '#pk': TABLE_LAYOUT.inboxIndex.partitionKey },
            ExpressionAttributeValues: { ':partition': inboxPartition('@all', shard) },
            Select: 'COUNT',
          }),
        );
        return output.Count ?? 0;
      }),
    );

    // Assess
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(200);
    for (const count of counts) expect(count).toBeGreaterThan(20);
  });

  it('pages newest first across the shards, every card exactly once', async () => {
    // Act
    const seen = await readAllPages(runs, { kind: 'every' }, 7);

    // Assess
    const expected = Array.from({ length: 200 }, (_unused, index) => `run-${199 - index}`);
    expect(seen.map((card) => card.runId)).toEqual(expected);
  });

  it('shows an approver the cards of their groups and the open ones, a card of two groups once', async () => {
    // Act
    const alpha = await readAllPages(runs, { kind: 'groups', groups: ['alpha'] }, 9);
    const both = await readAllPages(runs, { kind: 'groups', groups: ['alpha', 'beta'] }, 9);
    const nobody = await readAllPages(runs, { kind: 'groups', groups: [] }, 9);

    // Assess
    const expectedFor = (keep: (index: number) => boolean) =>
      Array.from({ length: 200 }, (_unused, index) => 199 - index)
        .filter(keep)
        .map((index) => `run-${index}`);
    expect(alpha.map((card) => card.runId)).toEqual(expectedFor((index) => index % 4 !== 1));
    expect(both.map((card) => card.runId)).toEqual(expectedFor(() => true));
    expect(nobody.map((card) => card.runId)).toEqual(expectedFor((index) => index % 4 === 3));
  });

  it('reads a page with one query per shard and one batch read, whatever the queue length and the groups', async () => {
    // Prepare
    const routings: InboxRouting[] = [
      { kind: 'groups', groups: ['alpha'] },
      { kind: 'groups', groups: ['alpha', 'beta'] },
      // Ten groups, eight of which route nothing here: the reach of a viewer's groups costs nothing
      {
        kind: 'groups',
        groups: ['alpha', 'beta', ...Array.from({ length: 8 }, (_unused, index) => `g${index}`)],
      },
    ];
    const calls: Array<Record<string, number>> = [];

    // Act: the first page and a page deep in the queue, for each viewer
    for (const routing of routings) {
      for (const cursor of [undefined, runs.waitingCardCursor(makeCard('run-40', 40))]) {
        counter.reset();
        const page = await runs.listWaitingCards({ limit: 10, routing, ...(cursor ? { cursor } : {}) });
        expect(page.cards).toHaveLength(10);
        calls.push(counter.snapshot());
      }
    }

    // Assess: the approvers' route's 4 shards, the pre-sharding partition, one BatchGetItem
    expect(calls[0]).toEqual({ 'DynamoDB:Query': 5, 'DynamoDB:BatchGetItem': 1 });
    for (const snapshot of calls) expect(snapshot).toEqual(calls[0]);
  });

  it('pages a viewer who sees few of the cards exactly once and newest first, reading further rounds', async () => {
    // Prepare: 200 cards, of which "rare" sees the open ones (1 in 4) and its own (3 of them)
    const local = await startDynalite();
    const localCounter = new AwsCallCounter();
    localCounter.attachTo(local.client);
    const repository = new DynamoRunRepository({
      client: local.documentClient,
      tableName: local.tableName,
      inboxShards: SHARDS,
    });
    const rare = (index: number) => [17, 90, 150].includes(index);
    for (let index = 0; index < 200; index += 1) {
      const groups = rare(index) ? ['rare'] : index % 4 === 3 ? undefined : ['common'];
      await repository.putCard(makeCard(`run-${index}`, index, groups));
    }
    const onlyRare: InboxRouting = { kind: 'groups', groups: ['rare'] };

    try {
      // Act: the open cards filled (one round), and a routing that sees only its 3 (no open ones)
      localCounter.reset();
      const seen = await readAllPages(repository, onlyRare, 9);
      const rareQueries = localCounter.snapshot()['DynamoDB:Query'];
      await Promise.all(
        Array.from({ length: 200 }, (_unused, index) => index)
          .filter((index) => index % 4 === 3)
          .map((index) => repository.closeCard(`run-${index}`, 'decided')),
      );
      localCounter.reset();
      const sparse = await repository.listWaitingCards({ limit: 9, routing: onlyRare });
      const sparseCalls = localCounter.snapshot();

      // Assess: every card once, newest first; a page that needed more rounds queried again
      const expected = Array.from({ length: 200 }, (_unused, index) => 199 - index)
        .filter((index) => rare(index) || index % 4 === 3)
        .map((index) => `run-${index}`);
      expect(seen.map((card) => card.runId)).toEqual(expected);
      expect(rareQueries).toBeGreaterThanOrEqual(5);
      expect(sparse.cards.map((card) => card.runId)).toEqual(['run-150', 'run-90', 'run-17']);
      expect(sparse.cursor).toBeUndefined();
      expect(sparseCalls['DynamoDB:Query']).toBeGreaterThan(5);
      expect(sparseCalls['DynamoDB:BatchGetItem']).toBe(1);
    } finally {
      await local.stop();
    }
  });

  it('shows a card by its own groups, not by what its index entry says (fail closed)', async () => {
    // Prepare: a card routed to "beta" whose entry claims "alpha" and "gamma" (a forged or stale entry)
    await runs.putCard(makeCard('run-entry-disagrees', 900, ['beta']));
    await dynamo.documentClient.send(
      new UpdateCommand({
        TableName: dynamo.tableName,
        Key: { pk: 'RUN#run-entry-disagrees', sk: 'INBOX#@approvers' },
        UpdateExpression: 'SET approverGroups = :groups',
        ExpressionAttributeValues: { ':groups': ['alpha', 'gamma'] },
      }),
    );

    // Act
    const alpha = await runs.listWaitingCards({ limit: 5, routing: { kind: 'groups', groups: ['gamma'] } });
    const beta = await runs.listWaitingCards({ limit: 5, routing: { kind: 'groups', groups: ['beta'] } });
    await runs.closeCard('run-entry-disagrees', 'decided');

    // Assess: the entry matched "gamma", the card did not; "beta" is refused by the entry, so it stays unseen
    expect(alpha.cards.map((card) => card.runId)).not.toContain('run-entry-disagrees');
    expect(beta.cards.map((card) => card.runId)).not.toContain('run-entry-disagrees');
  });

  it('filters an approver entry written before it carried the filtered fields by its card (and a disagreeing entry fails closed)', async () => {
    // Prepare: two open cards of "cfg-late"; one entry as #27 wrote it (groups only), one whose owner was altered
    await runs.putCard({ ...makeCard('run-entry-unfiltered', 901), configurationId: 'cfg-late' });
    await runs.putCard({ ...makeCard('run-entry-altered', 902), configurationId: 'cfg-late' });
    const updateEntry = (runId: string, expression: string, values?: Record<string, unknown>) =>
      dynamo.documentClient.send(
        new UpdateCommand({
          TableName: dynamo.tableName,
          Key: { pk: `RUN#${runId}`, sk: 'INBOX#@approvers' },
          UpdateExpression: expression,
          ExpressionAttributeNames: { '#owner': 'owner' },
          ...(values ? { ExpressionAttributeValues: values } : {}),
        }),
      );
    await updateEntry('run-entry-unfiltered', 'REMOVE configurationId, #owner, toolNames');
    await updateEntry('run-entry-altered', 'SET #owner = :owner', { ':owner': 'someone-else' });
    const routing: InboxRouting = { kind: 'groups', groups: [] };

    // Act
    const byConfiguration = await runs.listWaitingCards({
      limit: 5,
      routing,
      filter: { configurationId: 'cfg-late' },
    });
    const byOtherTool = await runs.listWaitingCards({ limit: 5, routing, filter: { tool: 'close_ticket' } });
    const bySomeoneElse = await runs.listWaitingCards({
      limit: 5,
      routing,
      filter: { owner: 'someone-else' },
    });
    await runs.closeCard('run-entry-unfiltered', 'decided');
    await runs.closeCard('run-entry-altered', 'decided');

    // Assess: the old entry passes DynamoDB's filter and is judged on its card; the altered one by its card too
    expect(byConfiguration.cards.map((card) => card.runId)).toEqual([
      'run-entry-altered',
      'run-entry-unfiltered',
    ]);
    expect(byOtherTool.cards).toEqual([]);
    expect(bySomeoneElse.cards).toEqual([]);
  });

  it.each(['newest', 'deadline'] as const)(
    'cuts a page short after its rounds, with a cursor where it stopped, and goes on from there (%s first)',
    async (order) => {
      // Prepare: one entry per shard first, then 2, 4 and 8: at most 15 a page, for a viewer who sees 1 in 4
      const routing: InboxRouting = { kind: 'groups', groups: [] };
      const filter = inboxPageFilterOf(routing);
      const pages: Array<{ runIds: string[]; nextPosition?: string }> = [];
      let position: string | undefined;

      // Act
      do {
        const page = await queryInboxPage(dynamo.documentClient, dynamo.tableName, {
          partitions: partitionsOf(routing, SHARDS),
          limit: 20,
          order,
          firstEvaluation: 1,
          ...(filter === undefined ? {} : { filter }),
          ...(position === undefined ? {} : { position }),
        });
        pages.push({
          runIds: page.items.map(({ item }) => String(item.pk).replace('RUN#', '')),
          ...(page.nextPosition === undefined ? {} : { nextPosition: page.nextPosition }),
        });
        position = page.nextPosition;
      } while (position !== undefined && pages.length < 100);

      // Assess: the open cards once each, in the order, over pages some of which were cut short
      const newestFirst = Array.from({ length: 200 }, (_unused, index) => 199 - index)
        .filter((index) => index % 4 === 3)
        .map((index) => `run-${index}`);
      const expected = order === 'newest' ? newestFirst : [...newestFirst].reverse();
      expect(pages.flatMap((page) => page.runIds)).toEqual(expected);
      expect(pages.some((page) => page.runIds.length < 20 && page.nextPosition !== undefined)).toBe(true);
    },
  );

  it('keeps its cursor stable while cards are added and decided between pages', async () => {
    // Prepare: a fresh table, 200 cards
    const local = await startDynalite();
    const repository = new DynamoRunRepository({
      client: local.documentClient,
      tableName: local.tableName,
      inboxShards: SHARDS,
    });
    for (let index = 0; index < 200; index += 1)
      await repository.putCard(makeCard(`run-${index}`, index, groupsOf(index)));
    const decidedUnseen = ['run-10', 'run-57', 'run-101'];
    const decidedSeen = ['run-199', 'run-190'];

    // Act: after page 2, new cards arrive and cards already shown and not yet shown are decided
    const seen = await readAllPages(repository, { kind: 'every' }, 11, async (pageNumber) => {
      if (pageNumber !== 2) return;
      for (let index = 200; index < 210; index += 1) {
        await repository.putCard(makeCard(`run-${index}`, index, groupsOf(index)));
      }
      for (const runId of [...decidedUnseen, ...decidedSeen]) await repository.closeCard(runId, 'decided');
    });
    await local.stop();

    // Assess: each card shown once, newest first; the decided unseen ones never; the new ones on a new first page
    const runIds = seen.map((card) => card.runId);
    expect(new Set(runIds).size).toBe(runIds.length);
    const expected = Array.from({ length: 200 }, (_unused, index) => `run-${199 - index}`).filter(
      (runId) => !decidedUnseen.includes(runId),
    );
    expect(runIds).toEqual(expected);
  });

  it('takes a decided card out of every partition it was indexed under', async () => {
    // Act
    await runs.closeCard('run-2', 'decided'); // routed to alpha and beta: one approver entry

    // Assess
    for (const routing of [
      { kind: 'every' },
      { kind: 'groups', groups: ['alpha'] },
      { kind: 'groups', groups: ['beta'] },
    ] as InboxRouting[]) {
      const cards = await readAllPages(runs, routing, 100);
      expect(cards.map((card) => card.runId)).not.toContain('run-2');
    }
    expect((await runs.getCard('run-2'))?.state).toBe('closed');
  });

  it('still lists and closes a card indexed under the single pre-sharding WAITING partition', async () => {
    // Prepare: a card item as the code before sharding wrote it (index key on the card itself,
    // card version 1: no schemaVersion, `waiting`)
    const { schemaVersion: _version, ...legacy } = { ...makeCard('run-legacy', 500), state: 'waiting' };
    await dynamo.documentClient.send(
      new PutCommand({
        TableName: dynamo.tableName,
        Item: {
          ...legacy,
          pk: 'RUN#run-legacy',
          sk: 'CARD',
          inboxPk: 'WAITING',
          inboxSk: `${legacy.pausedAt}#run-legacy`,
        },
      }),
    );

    // Act
    const before = await runs.listWaitingCards({ limit: 3, routing: { kind: 'groups', groups: [] } });
    const admin = await runs.listWaitingCards({ limit: 3 });
    await runs.closeCard('run-legacy', 'expired');
    const after = await readAllPages(runs, { kind: 'every' }, 100);

    // Assess
    expect(before.cards[0]?.runId).toBe('run-legacy');
    expect(admin.cards[0]?.runId).toBe('run-legacy');
    expect(after.map((card) => card.runId)).not.toContain('run-legacy');
    expect((await runs.getCard('run-legacy'))?.state).toBe('closed');
  });

  it.each([0, 65, 1.5, Number.NaN])('refuses %s shards, naming the value', (shards) => {
    // Act
    const create = () =>
      new DynamoRunRepository({
        client: dynamo.documentClient,
        tableName: dynamo.tableName,
        inboxShards: shards,
      });

    // Assess
    expect(create).toThrow(`got ${String(shards)}`);
  });
});
