import { expect, it } from 'vitest';
import { APPROVAL_RECORD_SCHEMA_VERSION } from '../../lambdas/core/approvals/decision-record.js';
import { STORED_CARD_SCHEMA_VERSION } from '../../lambdas/core/approvals/stored-card.js';
import { makeStoredRun } from '../support/stored-run-fixtures.js';
import { errorOf, makeCard, makeDecision, testDynamoAdapters } from './repository-contract-support.js';

testDynamoAdapters('table items and call counts of the run repository', (adapters) => {
  it('reads a card item written before card version 2 as open, tallies it, and closes it as the current version', async () => {
    // Prepare: the item as version 1 wrote it (no schemaVersion, `waiting`, one inbox key).
    const {
      schemaVersion: _version,
      state: _state,
      ...plain
    } = makeCard('run-card-v1', '2026-02-04T09:00:00.000Z');
    await adapters.putRawItem({
      ...plain,
      state: 'waiting',
      pk: 'RUN#run-card-v1',
      sk: 'CARD',
      inboxPk: 'WAITING',
      inboxSk: `${plain.pausedAt}#run-card-v1`,
    });

    // Act
    const read = await adapters.runs.getCard('run-card-v1');
    const listed = await adapters.runs.listWaitingCards({ limit: 100 });
    const tally = await adapters.runs.recordApproval({
      schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
      channel: 'api',
      runId: 'run-card-v1',
      turn: plain.turn,
      digest: plain.digest,
      approvedBy: 'alice',
      approvedAt: '2026-02-04T09:01:00.000Z',
    });
    const closing = await adapters.runs.closeCard('run-card-v1', 'cancelled');
    const closed = await adapters.runs.getCard('run-card-v1');

    // Assess
    expect(read).toMatchObject({ schemaVersion: STORED_CARD_SCHEMA_VERSION, state: 'open' });
    expect(listed.cards.map((card) => card.runId)).toContain('run-card-v1');
    expect(tally).toEqual({
      kind: 'recorded',
      approvedBy: ['alice'],
      delegatedApprovals: [],
      approvalContents: [],
    });
    expect(closing).toEqual({ kind: 'closed', turn: plain.turn, approverGroups: [] });
    expect(closed).toMatchObject({
      schemaVersion: STORED_CARD_SCHEMA_VERSION,
      state: 'closed',
      closedBecause: 'cancelled',
    });
  });

  it('reads a copied card and a copied run under the run id of the key they were read under', async () => {
    // Prepare: whole items of run-copy-source written under run-copy-target's key.
    const card = makeCard('run-copy-source', '2026-02-02T09:00:00.000Z');
    await adapters.runs.putCard(card);
    await adapters.runs.createRun(makeStoredRun('run-copy-source'), Uint8Array.from([7, 8, 9]));
    const { sealedCard, sealedToken, ...plain } = card;
    await adapters.putRawItem({
      ...plain,
      sealedCard,
      sealedToken,
      pk: 'RUN#run-copy-target',
      sk: 'CARD',
      inboxPk: 'WAITING',
      inboxSk: `${card.pausedAt}#run-copy-source`,
    });
    await adapters.putRawItem({
      ...makeStoredRun('run-copy-source'),
      sealedState: Uint8Array.from([7, 8, 9]),
      pk: 'RUN#run-copy-target',
      sk: 'RUN',
    });

    // Act
    const copiedCard = await adapters.runs.getCard('run-copy-target');
    const copiedRun = await adapters.runs.getRun('run-copy-target');
    const listed = await adapters.runs.listWaitingCards({ limit: 100 });

    // Assess: the id the sealer is asked to open them under is the key's, so it refuses them.
    expect(copiedCard?.runId).toBe('run-copy-target');
    expect(copiedRun?.record.runId).toBe('run-copy-target');
    expect((await adapters.runs.getRunRecord('run-copy-target'))?.runId).toBe('run-copy-target');
    expect(listed.cards.filter((entry) => entry.sealedCard.length === 3).map((entry) => entry.runId)).toEqual(
      expect.arrayContaining(['run-copy-source', 'run-copy-target']),
    );
  });

  it('lists a card item that does not parse as unreadable beside the others, and refuses it on a read', async () => {
    // Prepare
    await adapters.runs.putCard(makeCard('run-unreadable-ok', '2026-02-03T09:00:00.000Z'));
    await adapters.putRawItem({
      pk: 'RUN#run-unreadable',
      sk: 'CARD',
      inboxPk: 'WAITING',
      inboxSk: '2026-02-03T09:00:01.000Z#run-unreadable',
      runId: 'run-unreadable',
      state: 'waiting',
    });

    // Act
    const page = await adapters.runs.listWaitingCards({ limit: 100 });
    const error = await errorOf(adapters.runs.getCard('run-unreadable'));

    // Assess
    expect(page.unreadableRunIds).toEqual(['run-unreadable']);
    expect(page.cards.map((card) => card.runId)).toContain('run-unreadable-ok');
    expect(error.code).toBe('sealed-state-rejected');
  });

  it('reads a history page with one query of the history index (and one batch read of run labels), an audit with one query', async () => {
    // Prepare
    await adapters.runs.createRun(
      makeStoredRun('run-history-counted', { owner: 'counted-owner' }),
      Uint8Array.from([1]),
    );
    await adapters.runs.claimDecision(makeDecision('run-history-counted', 'counted-decider'));
    adapters.counter.reset();

    // Act
    await adapters.runs.listRunsOwnedBy('counted-owner', { limit: 20 });
    const runs = adapters.counter.snapshot();
    adapters.counter.reset();
    await adapters.runs.listActsOf('counted-decider', { limit: 20 });
    const acts = adapters.counter.snapshot();
    adapters.counter.reset();
    await adapters.runs.readAuditTrail('run-history-counted');
    const audit = adapters.counter.snapshot();

    // Assess
    expect(runs).toEqual({ 'DynamoDB:Query': 1 });
    expect(acts).toEqual({ 'DynamoDB:Query': 1, 'DynamoDB:BatchGetItem': 1 });
    expect(audit).toEqual({ 'DynamoDB:Query': 1 });
  });

  it('lists one page with one query per index shard and one batch read of the cards, whatever the groups and filters', async () => {
    // Prepare
    adapters.counter.reset();

    // Act: every card (4 shards of the every-card route, and the pre-sharding partition)
    await adapters.runs.listWaitingCards({ limit: 3 });
    const everyCard = adapters.counter.snapshot();
    adapters.counter.reset();
    // Approvers in one group and in ten: the 4 shards of the approvers' route, and the old partition
    await adapters.runs.listWaitingCards({ limit: 3, routing: { kind: 'groups', groups: ['a'] } });
    const oneGroup = adapters.counter.snapshot();
    adapters.counter.reset();
    const tenGroups = Array.from({ length: 10 }, (_unused, index) => `g${index}`);
    await adapters.runs.listWaitingCards({ limit: 3, routing: { kind: 'groups', groups: tenGroups } });
    const manyGroups = adapters.counter.snapshot();
    adapters.counter.reset();
    // Filtered and sorted by deadline: the filters are read as DynamoDB reads, no extra rounds
    await adapters.runs.listWaitingCards({
      limit: 3,
      order: 'deadline',
      routing: { kind: 'groups', groups: tenGroups },
      filter: { configurationId: 'cfg-none', tool: 'close_ticket', owner: 'nobody', group: 'g1' },
    });
    const filtered = adapters.counter.snapshot();

    // Assess
    expect(everyCard).toEqual({ 'DynamoDB:Query': 5 }); // the card items carry the every-card key
    expect(oneGroup['DynamoDB:Query']).toBe(5);
    expect(oneGroup['DynamoDB:BatchGetItem'] ?? 0).toBeLessThanOrEqual(1);
    expect(manyGroups).toEqual(oneGroup);
    // No entry matches: DynamoDB's filter left nothing to follow to a card
    expect(filtered).toEqual({ 'DynamoDB:Query': 5 });
  });
});

testDynamoAdapters('call counting', (adapters) => {
  it('counts DynamoDB calls by operation through the client middleware', async () => {
    // Prepare
    await adapters.runs.createRun(makeStoredRun('run-counted'), Uint8Array.from([1]));
    await adapters.runs.claimDecision(makeDecision('run-counted', 'alice'));
    adapters.counter.reset();

    // Act
    await adapters.runs.getRun('run-counted');
    await adapters.runs.updateRun('run-counted', { turn: 1 }, { expectStatus: ['running'] });
    await adapters.runs.claimDecision(makeDecision('run-counted', 'bob'));

    // Assess
    expect(adapters.counter.snapshot()).toEqual({
      'DynamoDB:GetItem': 2,
      'DynamoDB:PutItem': 1,
      'DynamoDB:UpdateItem': 1,
    });
    expect(adapters.counter.total('DynamoDB')).toBe(4);
    expect(adapters.counter.total('KMS')).toBe(0);
  });
});
