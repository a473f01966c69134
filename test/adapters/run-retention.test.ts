import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoRunRepository } from '../../lambdas/adapters/dynamo/run-repository.js';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import {
  DECISION_RECORD_SCHEMA_VERSION,
  type DecisionClaim,
  NO_CARD_SHOWN,
} from '../../lambdas/core/approvals/decision-record.js';
import type { StoredCard } from '../../lambdas/core/approvals/stored-card.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';
import { makeStoredCard, makeStoredRun } from '../support/stored-run-fixtures.js';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const ENDED_RUN_SECONDS = 90 * 86_400;
const DECISION_SECONDS = 400 * 86_400;

const makeCard = (runId: string): StoredCard =>
  makeStoredCard(runId, {
    pausedAt: '2026-03-01T11:00:00.000Z',
    expiresAt: '2026-03-08T11:00:00.000Z',
    toolNames: ['update_page_metadata'],
  });

describe('retention stamps of the DynamoDB run repository', () => {
  let dynamo: RunningDynalite;
  let runs: DynamoRunRepository;
  let keepingDecisions: DynamoRunRepository;

  beforeAll(async () => {
    dynamo = await startDynalite();
    const clock = { now: () => NOW };
    const common = { client: dynamo.documentClient, tableName: dynamo.tableName, clock };
    runs = new DynamoRunRepository({
      ...common,
      retention: { endedRunSeconds: ENDED_RUN_SECONDS, decisionSeconds: DECISION_SECONDS },
    });
    keepingDecisions = new DynamoRunRepository({
      ...common,
      retention: { endedRunSeconds: ENDED_RUN_SECONDS },
    });
  });

  afterAll(() => dynamo.stop());

  async function removeAfterOf(runId: string, sortKey: string): Promise<unknown> {
    const { Item } = await dynamo.documentClient.send(
      new GetCommand({
        TableName: dynamo.tableName,
        Key: { [TABLE_LAYOUT.partitionKey]: `RUN#${runId}`, [TABLE_LAYOUT.sortKey]: sortKey },
      }),
    );
    return Item?.[TABLE_LAYOUT.timeToLiveAttribute];
  }

  it('stamps a run when it ends, not while it runs or waits', async () => {
    // Prepare
    await runs.createRun(makeStoredRun('run-ends'), Uint8Array.from([1]));

    // Act
    await runs.updateRun('run-ends', { status: 'waiting', updatedAt: NOW.toISOString() });
    const whileWaiting = await removeAfterOf('run-ends', 'RUN');
    await runs.updateRun('run-ends', { status: 'completed', endedAt: NOW.toISOString() });
    const afterEnd = await removeAfterOf('run-ends', 'RUN');

    // Assess
    expect(whileWaiting).toBeUndefined();
    expect(afterEnd).toBe(NOW_SECONDS + ENDED_RUN_SECONDS);
    // The stamp is storage only: the record reads back as before.
    expect((await runs.getRunRecord('run-ends'))?.status).toBe('completed');
  });

  it.each(['failed', 'expired'] as const)('stamps a run that %s', async (status) => {
    // Prepare
    const runId = `run-${status}`;
    await runs.createRun(makeStoredRun(runId), Uint8Array.from([1]));

    // Act
    await runs.updateRun(runId, { status, endedAt: NOW.toISOString() });

    // Assess
    expect(await removeAfterOf(runId, 'RUN')).toBe(NOW_SECONDS + ENDED_RUN_SECONDS);
  });

  it('stamps a card when it closes, and a new pause replaces the stamped card with an unstamped one', async () => {
    // Prepare
    await runs.putCard(makeCard('run-card'));

    // Act
    const whileWaiting = await removeAfterOf('run-card', 'CARD');
    await runs.closeCard('run-card', 'decided');
    const closed = await removeAfterOf('run-card', 'CARD');
    await runs.putCard({ ...makeCard('run-card'), turn: 4 });
    const pausedAgain = await removeAfterOf('run-card', 'CARD');

    // Assess
    expect(whileWaiting).toBeUndefined();
    expect(closed).toBe(NOW_SECONDS + ENDED_RUN_SECONDS);
    expect(pausedAgain).toBeUndefined();
  });

  it('keeps decisions forever unless a decision retention is set', async () => {
    // Prepare
    const decision: Omit<DecisionClaim, 'runId'> = {
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      channel: 'api',
      turn: 3,
      decision: 'approve',
      digest: 'b'.repeat(64),
      decidedBy: 'ana',
      decidedAt: NOW.toISOString(),
      cardShown: NO_CARD_SHOWN,
      claimId: 'claim-retention',
    };

    // Act
    await keepingDecisions.claimDecision({ ...decision, runId: 'run-kept' });
    await runs.claimDecision({ ...decision, runId: 'run-limited' });

    // Assess
    expect(await removeAfterOf('run-kept', 'DECISION#000003')).toBeUndefined();
    expect(await removeAfterOf('run-limited', 'DECISION#000003')).toBe(NOW_SECONDS + DECISION_SECONDS);
    expect((await runs.getDecision('run-limited', 3))?.decidedBy).toBe('ana');
  });
});
