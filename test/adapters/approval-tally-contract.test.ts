import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoRunRepository } from '../../lambdas/adapters/dynamo/run-repository.js';
import { InMemoryRunRepository } from '../../lambdas/adapters/memory/in-memory-run-repository.js';
import {
  APPROVAL_RECORD_SCHEMA_VERSION,
  type ApprovalRecord,
} from '../../lambdas/core/approvals/decision-record.js';
import type { RunRepository } from '../../lambdas/core/ports.js';
import { startDynalite } from '../support/dynalite.js';
import { makeStoredCard } from '../support/stored-run-fixtures.js';

interface TallyStore {
  readonly runs: RunRepository;
  close(): Promise<void>;
}

async function startDynamoStore(): Promise<TallyStore> {
  const dynamo = await startDynalite();
  return {
    runs: new DynamoRunRepository({ client: dynamo.documentClient, tableName: dynamo.tableName }),
    close: () => dynamo.stop(),
  };
}

async function startInMemoryStore(): Promise<TallyStore> {
  return { runs: new InMemoryRunRepository(), close: async () => {} };
}

describe.each([
  { name: 'DynamoRunRepository on dynalite', start: startDynamoStore },
  { name: 'InMemoryRunRepository', start: startInMemoryStore },
])('k-of-n tally of delegated and per-call approvals: $name', ({ start }) => {
  let store: TallyStore;

  beforeAll(async () => {
    store = await start();
  });
  afterAll(async () => {
    await store.close();
  });

  it('records whom a delegate acted for and what a per-call approval approved, each person once, the first standing', async () => {
    // Prepare
    const card = makeStoredCard('run-qualified-tally');
    await store.runs.putCard(card);
    const approval = (
      approvedBy: string,
      extra: { actingFor?: string; content?: string } = {},
    ): ApprovalRecord => ({
      schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
      channel: 'api' as const,
      runId: card.runId,
      turn: card.turn,
      digest: card.digest,
      approvedBy,
      approvedAt: '2026-03-01T11:00:00.000Z',
      ...extra,
    });

    // Act
    await store.runs.recordApproval(approval('dave', { actingFor: 'alice' }));
    await store.runs.recordApproval(approval('dave', { actingFor: 'ben' }));
    await store.runs.recordApproval(approval('carl', { content: 'sha256:partial' }));
    await store.runs.recordApproval(approval('carl', { content: 'sha256:other' }));
    const last = await store.runs.recordApproval(approval('erin'));
    const stored = await store.runs.getCard(card.runId);

    // Assess
    expect(last).toEqual({
      kind: 'recorded',
      approvedBy: ['carl', 'dave', 'erin'],
      delegatedApprovals: [{ approver: 'dave', actingFor: 'alice' }],
      approvalContents: [{ approver: 'carl', content: 'sha256:partial' }],
    });
    expect(stored).toMatchObject({
      delegatedApprovals: [{ approver: 'dave', actingFor: 'alice' }],
      approvalContents: [{ approver: 'carl', content: 'sha256:partial' }],
    });
  });

  it('takes a lapsed approver’s entries out with them, and keeps them through a re-entered wait', async () => {
    // Prepare
    const card = makeStoredCard('run-qualified-lapse');
    await store.runs.putCard(card);
    const at: Omit<ApprovalRecord, 'approvedBy' | 'approvedAt'> = {
      schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
      channel: 'api' as const,
      runId: card.runId,
      turn: card.turn,
      digest: card.digest,
    };
    await store.runs.recordApproval({ ...at, approvedBy: 'dave', approvedAt: 'x', actingFor: 'alice' });
    await store.runs.recordApproval({
      ...at,
      approvedBy: 'carl',
      approvedAt: 'x',
      content: 'sha256:partial',
    });
    const before = await store.runs.getCard(card.runId);
    if (!before) throw new Error('no card');
    await store.runs.putCard({ ...before, sealedToken: Uint8Array.from([9]) });

    // Act
    const lapsed = await store.runs.lapseApprovals({
      ...at,
      approvers: ['dave', 'carl'],
      delegatedApprovals: before.delegatedApprovals ?? [],
      approvalContents: before.approvalContents ?? [],
    });
    const after = await store.runs.getCard(card.runId);

    // Assess
    expect(before).toMatchObject({
      delegatedApprovals: [{ approver: 'dave', actingFor: 'alice' }],
      approvalContents: [{ approver: 'carl', content: 'sha256:partial' }],
    });
    expect(lapsed).toEqual({ kind: 'lapsed', approvedBy: [], lapsedApprovers: ['carl', 'dave'] });
    expect(after?.delegatedApprovals).toBeUndefined();
    expect(after?.approvalContents).toBeUndefined();
  });
});
