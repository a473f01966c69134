import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import { DynamoRunRepository } from '../../lambdas/adapters/dynamo/run-repository.js';
import { InMemoryRunRepository } from '../../lambdas/adapters/memory/in-memory-run-repository.js';
import {
  DECISION_RECORD_SCHEMA_VERSION,
  type DecisionClaim,
  NO_CARD_SHOWN,
} from '../../lambdas/core/approvals/decision-record.js';
import type { RunRepository } from '../../lambdas/core/ports.js';
import { CALL_RECORD_SCHEMA_VERSION, type CallRecord } from '../../lambdas/core/runs/call-record.js';
import { startDynalite } from '../support/dynalite.js';
import { makeStoredCard } from '../support/stored-run-fixtures.js';

/** A run repository under the exactly-once contract, with a DynamoDB call counter where there is one. */
interface RepositoryUnderContract {
  readonly runs: RunRepository;
  readonly counter?: AwsCallCounter;
  close(): Promise<void>;
}

async function startDynamoRepository(): Promise<RepositoryUnderContract> {
  const dynamo = await startDynalite();
  const counter = new AwsCallCounter();
  counter.attachTo(dynamo.client);
  return {
    runs: new DynamoRunRepository({ client: dynamo.documentClient, tableName: dynamo.tableName }),
    counter,
    close: () => dynamo.stop(),
  };
}

async function startInMemoryRepository(): Promise<RepositoryUnderContract> {
  return { runs: new InMemoryRunRepository(), close: async () => {} };
}

function makeDecision(runId: string, overrides: Partial<DecisionClaim> = {}): DecisionClaim {
  return {
    schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
    channel: 'api',
    claimId: `claim-${runId}`,
    runId,
    turn: 2,
    decision: 'approve',
    digest: 'a'.repeat(64),
    decidedBy: 'alice',
    decidedAt: '2026-03-01T11:00:00.000Z',
    cardShown: NO_CARD_SHOWN,
    ...overrides,
  };
}

function makeCallRecord(runId: string, overrides: Partial<CallRecord> = {}): CallRecord {
  return {
    schemaVersion: CALL_RECORD_SCHEMA_VERSION,
    runId,
    turn: 2,
    index: 0,
    tool: 'update_page_metadata',
    state: 'started',
    attemptId: 'attempt-1',
    updatedAt: '2026-03-01T11:00:00.000Z',
    transientFailures: 0,
    ...overrides,
  };
}

describe.each([
  { name: 'DynamoRunRepository on dynalite', start: startDynamoRepository },
  { name: 'InMemoryRunRepository', start: startInMemoryRepository },
])('run repository contract, exactly once: $name', ({ start }) => {
  let repository: RepositoryUnderContract;
  let runs: RunRepository;

  beforeAll(async () => {
    repository = await start();
    runs = repository.runs;
  });

  afterAll(async () => {
    await repository.close();
  });

  describe('cards: a pause never reopens a decided turn', () => {
    it('puts a card over none, another turn or an open one, but never over one closed at its own turn', async () => {
      // Prepare
      await runs.putCard(makeStoredCard('run-put', { turn: 1 }));
      await runs.closeCard('run-put', 'decided');

      // Act
      const overEarlierTurn = await runs.putCard(makeStoredCard('run-put', { turn: 2 }), {
        unlessClosedAtItsTurn: true,
      });
      const overOpen = await runs.putCard(makeStoredCard('run-put', { turn: 2, waitId: 'wait-2' }), {
        unlessClosedAtItsTurn: true,
      });
      await runs.closeCard('run-put', 'decided');
      const overClosed = await runs.putCard(makeStoredCard('run-put', { turn: 2, waitId: 'wait-3' }), {
        unlessClosedAtItsTurn: true,
      });

      // Assess
      expect(overEarlierTurn).toEqual({ kind: 'written' });
      expect(overOpen).toEqual({ kind: 'written' });
      expect(overClosed).toEqual({ kind: 'condition-failed' });
      expect(await runs.getCard('run-put')).toMatchObject({ state: 'closed', waitId: 'wait-2' });
      expect((await runs.listWaitingCards({ limit: 100 })).cards.map((card) => card.runId)).not.toContain(
        'run-put',
      );
    });

    it('seals a new token only into the card still open at its turn and digest', async () => {
      // Prepare
      await runs.putCard(makeStoredCard('run-renew', { turn: 2, waitId: 'wait-1', notification: 'pending' }));
      const change = {
        turn: 2,
        digest: 'a'.repeat(64),
        sealedToken: Uint8Array.from([9, 9]),
        waitId: 'wait-2',
      };

      // Act
      const renewed = await runs.renewCardToken('run-renew', change);
      const otherDigest = await runs.renewCardToken('run-renew', { ...change, digest: 'b'.repeat(64) });
      const otherTurn = await runs.renewCardToken('run-renew', { ...change, turn: 3 });
      await runs.closeCard('run-renew', 'decided');
      const closed = await runs.renewCardToken('run-renew', { ...change, waitId: 'wait-3' });
      const missing = await runs.renewCardToken('run-never-paused', change);

      // Assess
      expect(renewed).toEqual({ kind: 'written' });
      for (const refused of [otherDigest, otherTurn, closed, missing]) {
        expect(refused).toEqual({ kind: 'condition-failed' });
      }
      const card = await runs.getCard('run-renew');
      expect(card).toMatchObject({ waitId: 'wait-2', state: 'closed', notification: 'pending' });
      expect(Array.from(card?.sealedToken ?? [])).toEqual([9, 9]);
    });

    it("marks a card's event sent only at its turn", async () => {
      // Prepare
      await runs.putCard(makeStoredCard('run-outbox', { turn: 2, notification: 'pending' }));

      // Act
      await runs.markCardNotified('run-outbox', 1);
      const before = await runs.getCard('run-outbox');
      await runs.markCardNotified('run-outbox', 2);
      const after = await runs.getCard('run-outbox');

      // Assess
      expect(before?.notification).toBe('pending');
      expect(after?.notification).toBe('sent');
    });

    it('closes a card for a delivery only while it holds the token of the wait that was delivered to', async () => {
      // Prepare
      await runs.putCard(makeStoredCard('run-wait', { waitId: 'wait-2' }));
      await runs.putCard(makeStoredCard('run-no-wait'));

      // Act
      const stale = await runs.closeCard('run-wait', 'decided', { expectWaitId: 'wait-1' });
      const stillOpen = await runs.getCard('run-wait');
      const current = await runs.closeCard('run-wait', 'decided', { expectWaitId: 'wait-2' });
      const withoutWait = await runs.closeCard('run-no-wait', 'decided', { expectWaitId: null });
      const noCard = await runs.closeCard('run-no-card', 'decided', { expectWaitId: 'wait-1' });

      // Assess
      expect(stale).toEqual({ kind: 'condition-failed' });
      expect(stillOpen?.state).toBe('open');
      expect(current).toMatchObject({ kind: 'closed' });
      expect(withoutWait).toMatchObject({ kind: 'closed' });
      expect(noCard).toEqual({ kind: 'not-open' });
      expect(await runs.getCard('run-wait')).toMatchObject({ state: 'closed', closedBecause: 'decided' });
    });
  });

  describe('decisions: a claim is undelivered until it is marked delivered', () => {
    it('lists approvals and rejections claimed before a time, oldest first, until marked delivered; never a cancel', async () => {
      // Prepare
      await runs.claimDecision(makeDecision('run-undelivered-b', { decidedAt: '2026-03-01T11:00:02.000Z' }));
      await runs.claimDecision(
        makeDecision('run-undelivered-a', { decidedAt: '2026-03-01T11:00:01.000Z', decision: 'reject' }),
      );
      await runs.claimDecision(makeDecision('run-undelivered-c', { decidedAt: '2026-03-01T11:00:03.000Z' }));
      await runs.claimDecision(
        makeDecision('run-cancelled', { decidedAt: '2026-03-01T11:00:00.000Z', decision: 'cancel' }),
      );
      await runs.claimDecision(makeDecision('run-too-young', { decidedAt: '2026-03-01T11:59:00.000Z' }));
      await runs.claimDecision(makeDecision('run-delivered', { decidedAt: '2026-03-01T11:00:00.500Z' }));
      await runs.markDecisionDelivered('run-delivered', 2);

      // Act
      const listed = await runs.listUndeliveredDecisions({
        decidedBefore: '2026-03-01T11:30:00.000Z',
        limit: 10,
      });
      const first = await runs.listUndeliveredDecisions({
        decidedBefore: '2026-03-01T11:30:00.000Z',
        limit: 1,
      });
      await runs.markDecisionDelivered('run-undelivered-a', 2);
      await runs.markDecisionDelivered('run-undelivered-a', 2);
      const after = await runs.listUndeliveredDecisions({
        decidedBefore: '2026-03-01T11:30:00.000Z',
        limit: 10,
      });

      // Assess
      expect(listed.map((claim) => claim.runId)).toEqual([
        'run-undelivered-a',
        'run-undelivered-b',
        'run-undelivered-c',
      ]);
      expect(listed[0]).toEqual(
        makeDecision('run-undelivered-a', { decidedAt: '2026-03-01T11:00:01.000Z', decision: 'reject' }),
      );
      expect(first.map((claim) => claim.runId)).toEqual(['run-undelivered-a']);
      expect(after.map((claim) => claim.runId)).toEqual(['run-undelivered-b', 'run-undelivered-c']);
      // Delivery changes nothing of the audit record a claim is.
      expect(await runs.getDecision('run-undelivered-a', 2)).toEqual(listed[0]);
    });

    it('keeps the claim id of the request that wrote the claim, so its retry knows it', async () => {
      // Act
      const first = await runs.claimDecision(makeDecision('run-claim-id', { claimId: 'claim-1' }));
      const retry = await runs.claimDecision(makeDecision('run-claim-id', { claimId: 'claim-1' }));

      // Assess
      expect(first).toEqual({ kind: 'claimed' });
      expect(retry).toMatchObject({ kind: 'already-decided', existing: { claimId: 'claim-1' } });
    });
  });

  describe('the call ledger', () => {
    it('writes a call record only over what the writer expects: nothing, or the attempt and state it read', async () => {
      // Prepare
      const started = makeCallRecord('run-ledger');

      // Act
      const first = await runs.putCallRecord(started, { kind: 'absent' });
      const second = await runs.putCallRecord({ ...started, attemptId: 'attempt-2' }, { kind: 'absent' });
      const wrongAttempt = await runs.putCallRecord(
        { ...started, attemptId: 'attempt-2' },
        { kind: 'held', attemptId: 'attempt-3', state: 'started' },
      );
      const wrongState = await runs.putCallRecord(
        { ...started, attemptId: 'attempt-2' },
        { kind: 'held', attemptId: 'attempt-1', state: 'retrying' },
      );
      const ran = await runs.putCallRecord(
        { ...started, state: 'ran', sealedResult: Uint8Array.from([1, 2, 3]) },
        { kind: 'held', attemptId: 'attempt-1', state: 'started' },
      );

      // Assess
      expect(first).toEqual({ kind: 'written' });
      expect(second).toEqual({ kind: 'condition-failed' });
      expect(wrongAttempt).toEqual({ kind: 'condition-failed' });
      expect(wrongState).toEqual({ kind: 'condition-failed' });
      expect(ran).toEqual({ kind: 'written' });
      const [record] = await runs.listCallRecords('run-ledger', 2);
      expect(record).toMatchObject({ state: 'ran', attemptId: 'attempt-1' });
      expect(Array.from(record?.sealedResult ?? [])).toEqual([1, 2, 3]);
    });

    it("lists one turn's records in call order, and nothing of other turns or runs", async () => {
      // Prepare
      for (const index of [2, 0, 1]) {
        await runs.putCallRecord(makeCallRecord('run-turns', { index }), { kind: 'absent' });
      }
      await runs.putCallRecord(makeCallRecord('run-turns', { turn: 3 }), { kind: 'absent' });
      await runs.putCallRecord(makeCallRecord('run-turns-other'), { kind: 'absent' });
      repository.counter?.reset();

      // Act
      const records = await runs.listCallRecords('run-turns', 2);
      const counted = repository.counter?.snapshot();

      // Assess
      expect(records.map((record) => [record.turn, record.index])).toEqual([
        [2, 0],
        [2, 1],
        [2, 2],
      ]);
      expect(await runs.listCallRecords('run-turns', 4)).toEqual([]);
      if (counted) expect(counted).toEqual({ 'DynamoDB:Query': 1 });
    });
  });
});
