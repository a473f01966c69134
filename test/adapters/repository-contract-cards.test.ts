import { expect, it } from 'vitest';
import { STORED_CARD_SCHEMA_VERSION, type StoredCard } from '../../lambdas/core/approvals/stored-card.js';
import type { RunRepository } from '../../lambdas/core/ports.js';
import { errorOf, makeCard, testEveryRunRepository } from './repository-contract-support.js';

testEveryRunRepository('cards and the inbox', (adapters) => {
  it('lists waiting cards newest first, page by page, and drops closed ones', async () => {
    // Prepare
    const pausedTimes = ['10:01', '10:05', '10:03', '10:04', '10:02'];
    for (const [index, time] of pausedTimes.entries()) {
      await adapters.runs.putCard(makeCard(`run-card-${index}`, `2026-03-01T${time}:00.000Z`));
    }
    await adapters.runs.closeCard('run-card-3', 'expired');

    // Act
    const seen: string[] = [];
    let cursor: string | undefined;
    let pagesRead = 0;
    do {
      const page = await adapters.runs.listWaitingCards(
        cursor === undefined ? { limit: 2 } : { limit: 2, cursor },
      );
      seen.push(...page.cards.map((card) => card.runId));
      for (const card of page.cards) expect(card.state).toBe('open');
      cursor = page.cursor;
      pagesRead += 1;
    } while (cursor !== undefined && pagesRead < 10);

    // Assess
    expect(seen).toEqual(['run-card-1', 'run-card-2', 'run-card-4', 'run-card-0']);
    const closed = await adapters.runs.getCard('run-card-3');
    expect(closed).toMatchObject({
      schemaVersion: STORED_CARD_SCHEMA_VERSION,
      state: 'closed',
      closedBecause: 'expired',
    });
    expect(Array.from(closed?.sealedToken ?? [])).toEqual([4, 5, 6]);
  });

  it('reads a card back as it was stored', async () => {
    // Prepare
    const card = makeCard('run-card-read', '2026-02-01T09:00:00.000Z', {
      toolNames: [],
      writeToolNames: [],
    });

    // Act
    await adapters.runs.putCard(card);

    // Assess
    expect(await adapters.runs.getCard('run-card-read')).toEqual(card);
    expect(await adapters.runs.getCard('run-card-none')).toBeUndefined();
    await expect(adapters.runs.closeCard('run-card-none', 'decided')).resolves.toEqual({
      kind: 'not-open',
    });
  });

  it('says which closing found the card open: its turn and groups once, then not again', async () => {
    // Prepare
    await adapters.runs.putCard(
      makeCard('run-card-close', '2026-03-01T10:00:00.000Z', { approverGroups: ['finance'] }),
    );

    // Act
    const closings = await Promise.all([
      adapters.runs.closeCard('run-card-close', 'decided'),
      adapters.runs.closeCard('run-card-close', 'cancelled'),
    ]);
    const again = await adapters.runs.closeCard('run-card-close', 'expired');

    // Assess: whatever the order, exactly one closing saw it open, and it names the turn
    const turn = makeCard('run-card-close', '2026-03-01T10:00:00.000Z').turn;
    expect(closings.filter((outcome) => outcome.kind === 'closed')).toEqual([
      { kind: 'closed', turn, approverGroups: ['finance'] },
    ]);
    expect(again).toEqual({ kind: 'not-open' });
  });

  it('lists to an approver only the cards routed to nobody in particular or to their groups', async () => {
    // Prepare
    await adapters.runs.putCard(makeCard('run-route-open', '2026-01-05T09:00:00.000Z'));
    await adapters.runs.putCard(
      makeCard('run-route-legal', '2026-01-05T09:01:00.000Z', { approverGroups: ['legal'] }),
    );
    await adapters.runs.putCard(
      makeCard('run-route-both', '2026-01-05T09:02:00.000Z', { approverGroups: ['legal', 'finance'] }),
    );
    await adapters.runs.putCard(
      makeCard('run-route-finance', '2026-01-05T09:03:00.000Z', { approverGroups: ['finance'] }),
    );
    const routedIds = (cards: readonly StoredCard[]) =>
      cards.map((card) => card.runId).filter((runId) => runId.startsWith('run-route-'));

    // Act
    const legal = await adapters.runs.listWaitingCards({
      limit: 100,
      routing: { kind: 'groups', groups: ['legal'] },
    });
    const nobody = await adapters.runs.listWaitingCards({
      limit: 100,
      routing: { kind: 'groups', groups: [] },
    });
    const every = await adapters.runs.listWaitingCards({ limit: 100, routing: { kind: 'every' } });

    // Assess: newest first, a card routed to two of the viewer's groups listed once.
    expect(routedIds(legal.cards)).toEqual(['run-route-both', 'run-route-legal', 'run-route-open']);
    expect(routedIds(nobody.cards)).toEqual(['run-route-open']);
    expect(routedIds(every.cards)).toEqual([
      'run-route-finance',
      'run-route-both',
      'run-route-legal',
      'run-route-open',
    ]);
  });

  it.each([
    ['not base64url', 'not a cursor!'],
    ['not JSON', Buffer.from('{"pk":').toString('base64url')],
    [
      'a key of another index',
      Buffer.from(JSON.stringify({ pk: 'PAGES', sk: 'PAGE#1' })).toString('base64url'),
    ],
    [
      'a key with a non-string attribute',
      Buffer.from(JSON.stringify({ pk: 'RUN#1', sk: 'CARD', inboxPk: 'WAITING', inboxSk: 7 })).toString(
        'base64url',
      ),
    ],
    [
      'a position that is not a card key',
      Buffer.from(JSON.stringify({ before: 'WAITING#@all#0' })).toString('base64url'),
    ],
    [
      'the index key the pre-sharding inbox used',
      Buffer.from(
        JSON.stringify({
          pk: 'RUN#1',
          sk: 'CARD',
          inboxPk: 'WAITING',
          inboxSk: '2026-01-01T00:00:00.000Z#1',
        }),
      ).toString('base64url'),
    ],
    ['too long', 'a'.repeat(5000)],
  ])('refuses a cursor that is %s as a bad request', async (_label, cursor) => {
    // Act
    const error = await errorOf(adapters.runs.listWaitingCards({ limit: 2, cursor }));

    // Assess
    expect(error.code).toBe('bad-request');
    expect(error.field).toBe('cursor');
  });

  it('refuses a page size that is not a positive integer', async () => {
    // Act
    const error = await errorOf(adapters.runs.listWaitingCards({ limit: 0 }));

    // Assess
    expect(error.code).toBe('bad-request');
    expect(error.field).toBe('limit');
  });
});

testEveryRunRepository('inbox filters and order', (adapters) => {
  it('lists closing soon first and narrows by configuration, tool, owner and routed group, a filtered page resuming where it stopped', async () => {
    // Prepare: six cards of one configuration among cards of another, paused in this order
    const times = ['09:01', '09:02', '09:03', '09:04', '09:05', '09:06'];
    for (const [index, time] of times.entries()) {
      await adapters.runs.putCard(
        makeCard(`run-filter-${index}`, `2026-02-01T${time}:00.000Z`, {
          configurationId: 'cfg-filter',
          owner: index % 2 === 0 ? 'even-owner' : 'odd-owner',
          toolNames: index < 3 ? ['update_page_metadata'] : ['close_ticket'],
          ...(index === 5 ? { approverGroups: ['finance'] } : {}),
        }),
      );
      await adapters.runs.putCard(
        makeCard(`run-other-${index}`, `2026-02-01T${time}:30.000Z`, { configurationId: 'cfg-other' }),
      );
    }
    const listAll = async (options: Omit<Parameters<RunRepository['listWaitingCards']>[0], 'limit'>) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 20; pages += 1) {
        const page = await adapters.runs.listWaitingCards({
          limit: 2,
          ...options,
          ...(cursor ? { cursor } : {}),
        });
        seen.push(...page.cards.map((card) => card.runId));
        cursor = page.cursor;
        if (cursor === undefined) break;
      }
      return seen;
    };

    // Act
    const closingSoon = await listAll({ order: 'deadline', filter: { configurationId: 'cfg-filter' } });
    const newest = await listAll({ filter: { configurationId: 'cfg-filter' } });
    const byTool = await listAll({ filter: { configurationId: 'cfg-filter', tool: 'close_ticket' } });
    const byOwner = await listAll({
      order: 'deadline',
      filter: { configurationId: 'cfg-filter', owner: 'odd-owner' },
    });
    const byGroup = await listAll({
      routing: { kind: 'groups', groups: ['finance'] },
      filter: { group: 'finance', configurationId: 'cfg-filter' },
    });
    const newestCursor = (await adapters.runs.listWaitingCards({ limit: 1 })).cursor ?? '';
    const crossed = await errorOf(
      adapters.runs.listWaitingCards({ limit: 1, order: 'deadline', cursor: newestCursor }),
    );

    // Assess
    const filtered = times.map((_time, index) => `run-filter-${index}`);
    expect(closingSoon).toEqual(filtered);
    expect(newest).toEqual([...filtered].reverse());
    expect(byTool).toEqual(['run-filter-5', 'run-filter-4', 'run-filter-3']);
    expect(byOwner).toEqual(['run-filter-1', 'run-filter-3', 'run-filter-5']);
    expect(byGroup).toEqual(['run-filter-5']);
    expect(crossed).toMatchObject({ code: 'bad-request', field: 'cursor' });
  });
});
