import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoRunRepository } from '../../lambdas/adapters/dynamo/run-repository.js';
import { InMemoryRunRepository } from '../../lambdas/adapters/memory/in-memory-run-repository.js';
import type { CardEscalation } from '../../lambdas/core/approvals/escalation-ladder.js';
import type { StoredCard } from '../../lambdas/core/approvals/stored-card.js';
import type { RunRepository } from '../../lambdas/core/ports.js';
import { startDynalite } from '../support/dynalite.js';
import { makeStoredCard } from '../support/stored-run-fixtures.js';

/** A run repository under the escalation contract, and what its inbox index holds for a run. */
interface EscalationStore {
  readonly runs: RunRepository;
  /**
   * The groups a run's indexed approver entry names (`*`: any approver); none when no entry of
   * the run is in the index (and none in memory, which has no index).
   */
  indexedRoutes(runId: string): Promise<string[]>;
  close(): Promise<void>;
}

async function startDynamoStore(): Promise<EscalationStore> {
  const dynamo = await startDynalite();
  return {
    runs: new DynamoRunRepository({ client: dynamo.documentClient, tableName: dynamo.tableName }),
    indexedRoutes: async (runId) => {
      const { Items: items = [] } = await dynamo.documentClient.send(
        new ScanCommand({
          TableName: dynamo.tableName,
          FilterExpression: 'pk = :pk AND begins_with(sk, :entry) AND attribute_exists(inboxPk)',
          ExpressionAttributeValues: { ':pk': `RUN#${runId}`, ':entry': 'INBOX#' },
        }),
      );
      return items
        .flatMap((item) => {
          const groups = item.approverGroups as string[] | undefined;
          return groups === undefined ? ['*'] : [...groups];
        })
        .sort();
    },
    close: () => dynamo.stop(),
  };
}

async function startInMemoryStore(): Promise<EscalationStore> {
  return { runs: new InMemoryRunRepository(), indexedRoutes: async () => [], close: async () => {} };
}

const LADDER: CardEscalation = {
  steps: [
    { at: '2026-03-01T10:30:00.000Z', approverGroups: ['leads'] },
    { at: '2026-03-01T11:00:00.000Z', approverGroups: ['directors', 'leads'] },
  ],
  reached: 0,
  notified: 0,
};

function escalatingCard(runId: string, overrides: Partial<StoredCard> = {}): StoredCard {
  return makeStoredCard(runId, { approverGroups: ['finance'], escalation: LADDER, ...overrides });
}

const leadsInbox = { kind: 'groups', groups: ['leads'] } as const;

describe.each([
  { name: 'DynamoRunRepository on dynalite', start: startDynamoStore, indexed: true },
  { name: 'InMemoryRunRepository', start: startInMemoryStore, indexed: false },
])('card escalation contract: $name', ({ start, indexed }) => {
  let store: EscalationStore;

  beforeAll(async () => {
    store = await start();
  });
  afterAll(async () => {
    await store.close();
  });

  const listedTo = async (routing: typeof leadsInbox, runId: string) =>
    (await store.runs.listWaitingCards({ limit: 100, routing })).cards.some((card) => card.runId === runId);

  it('routes a waiting card to the step’s groups once, and lists it there until it closes', async () => {
    // Prepare
    const card = escalatingCard('run-escalates');
    await store.runs.putCard(card);
    const change = { runId: card.runId, turn: card.turn, digest: card.digest, step: 0 };
    const listedBefore = await listedTo(leadsInbox, card.runId);

    // Act
    const first = await store.runs.escalateCard(change);
    const repeated = await store.runs.escalateCard(change);
    const listedAfter = await listedTo(leadsInbox, card.runId);
    await store.runs.closeCard(card.runId, 'decided');

    // Assess
    expect(listedBefore).toBe(false);
    expect(first).toMatchObject({ kind: 'escalated', card: { escalation: { reached: 1, notified: 0 } } });
    expect(repeated).toEqual({ kind: 'card-moved' });
    expect(listedAfter).toBe(true);
    expect(await listedTo(leadsInbox, card.runId)).toBe(false);
    expect(await store.indexedRoutes(card.runId)).toEqual([]);
  });

  it('finds an escalated card by the inbox filters: its added group, and its configuration, tool and owner kept on the entry', async () => {
    // Prepare
    const card = escalatingCard('run-escalation-filtered', {
      configurationId: 'cfg-escalation-filter',
      owner: 'filter-owner',
    });
    await store.runs.putCard(card);
    const [tool = ''] = card.toolNames;
    const listed = async (filter: Parameters<RunRepository['listWaitingCards']>[0]['filter']) =>
      (
        await store.runs.listWaitingCards({ limit: 100, routing: leadsInbox, ...(filter ? { filter } : {}) })
      ).cards.map((listedCard) => listedCard.runId);
    const before = await listed({ group: 'leads' });

    // Act
    await store.runs.escalateCard({ runId: card.runId, turn: card.turn, digest: card.digest, step: 0 });
    const byGroup = await listed({ group: 'leads' });
    const byEverything = await listed({
      group: 'leads',
      configurationId: 'cfg-escalation-filter',
      owner: 'filter-owner',
      tool,
    });
    const byOtherOwner = await listed({ group: 'leads', owner: 'someone-else' });
    await store.runs.closeCard(card.runId, 'decided');

    // Assess
    expect(before).not.toContain(card.runId);
    expect(byGroup).toContain(card.runId);
    expect(byEverything).toEqual([card.runId]);
    expect(byOtherOwner).not.toContain(card.runId);
  });

  it('routes every step up to a later one whose timer came first, and records each step announced once', async () => {
    // Prepare
    const card = escalatingCard('run-escalates-late');
    await store.runs.putCard(card);
    const at = (step: number) => ({ runId: card.runId, turn: card.turn, digest: card.digest, step });

    // Act
    const second = await store.runs.escalateCard(at(1));
    const first = await store.runs.escalateCard(at(0));
    await store.runs.markEscalationNotified(at(1));
    await store.runs.markEscalationNotified(at(0));

    // Assess
    expect(second).toMatchObject({ kind: 'escalated', card: { escalation: { reached: 2 } } });
    expect(first).toEqual({ kind: 'card-moved' });
    expect((await store.runs.getCard(card.runId))?.escalation).toEqual({
      ...LADDER,
      reached: 2,
      notified: 2,
    });
    if (indexed) expect(await store.indexedRoutes(card.runId)).toEqual(['directors', 'finance', 'leads']);
  });

  it('does nothing for a card at another turn or digest, or closed, and leaves no entry behind', async () => {
    // Prepare
    const card = escalatingCard('run-escalation-moved');
    await store.runs.putCard(card);
    const change = { runId: card.runId, turn: card.turn, digest: card.digest, step: 0 };

    // Act
    const otherTurn = await store.runs.escalateCard({ ...change, turn: card.turn + 1 });
    const otherDigest = await store.runs.escalateCard({ ...change, digest: 'c'.repeat(64) });
    const noSuchStep = await store.runs.escalateCard({ ...change, step: 4 });
    await store.runs.closeCard(card.runId, 'decided');
    const closed = await store.runs.escalateCard(change);

    // Assess
    for (const outcome of [otherTurn, otherDigest, noSuchStep, closed])
      expect(outcome).toEqual({ kind: 'card-moved' });
    expect((await store.runs.getCard(card.runId))?.escalation?.reached).toBe(0);
    expect(await store.indexedRoutes(card.runId)).toEqual([]);
  });

  it('adds nobody to a card routed to every approver: it stays on the open route', async () => {
    // Prepare
    const card = makeStoredCard('run-escalates-open', { escalation: LADDER });
    await store.runs.putCard(card);

    // Act
    const outcome = await store.runs.escalateCard({
      runId: card.runId,
      turn: card.turn,
      digest: card.digest,
      step: 0,
    });

    // Assess
    expect(outcome).toMatchObject({ kind: 'escalated' });
    expect(await listedTo({ kind: 'groups', groups: [] } as never, card.runId)).toBe(true);
    if (indexed) expect(await store.indexedRoutes(card.runId)).toEqual(['*']);
  });

  it('lets one of 20 concurrent deliveries of a step route the card, and keeps its entries', async () => {
    // Prepare
    const card = escalatingCard('run-escalation-race');
    await store.runs.putCard(card);
    const change = { runId: card.runId, turn: card.turn, digest: card.digest, step: 0 };

    // Act
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => store.runs.escalateCard(change)));

    // Assess
    expect(outcomes.filter((outcome) => outcome.kind === 'escalated')).toHaveLength(1);
    expect(await listedTo(leadsInbox, card.runId)).toBe(true);
    if (indexed) expect(await store.indexedRoutes(card.runId)).toEqual(['finance', 'leads']);
  });

  it('leaves no entry of a card that a decision closed while a step routed it (20 races)', async () => {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      // Prepare
      const card = escalatingCard(`run-escalation-close-${attempt}`);
      await store.runs.putCard(card);

      // Act
      const [outcome] = await Promise.all([
        store.runs.escalateCard({ runId: card.runId, turn: card.turn, digest: card.digest, step: 0 }),
        store.runs.closeCard(card.runId, 'decided'),
      ]);

      // Assess: whichever came first, the closed card is listed nowhere.
      expect(['escalated', 'card-moved']).toContain(outcome.kind);
      expect(await listedTo(leadsInbox, card.runId)).toBe(false);
      expect(await store.indexedRoutes(card.runId)).toEqual([]);
    }
  });
});
