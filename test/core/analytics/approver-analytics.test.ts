import { describe, expect, it } from 'vitest';
import { InMemoryApproverResponseStore } from '../../../lambdas/adapters/memory/in-memory-approver-response-store.js';
import {
  APPROVER_RESPONSE_SCHEMA_VERSION,
  type ApproverResponse,
  EVERY_APPROVER_GROUP,
  readApproverResponse,
} from '../../../lambdas/core/analytics/approver-response.js';
import { readApproverAnalytics } from '../../../lambdas/core/analytics/read-approver-analytics.js';
import { recordApproverResponse } from '../../../lambdas/core/analytics/record-approver-response.js';
import { summarizeApproverResponses } from '../../../lambdas/core/analytics/summarize-approver-responses.js';
import { userProfileSchema } from '../../../lambdas/core/identity.js';
import { silentLogger } from '../../../lambdas/core/ports.js';
import type { ChainEntry } from '../../../lambdas/core/receipts/chain-entry.js';
import { createChainDependencies, recordSampleChain } from '../../support/receipt-chains.js';

function response(overrides: Partial<ApproverResponse>): ApproverResponse {
  return {
    schemaVersion: APPROVER_RESPONSE_SCHEMA_VERSION,
    runId: 'run-1',
    turn: 1,
    sequence: 0,
    approver: 'ana',
    groups: ['marketing'],
    outcome: 'approve',
    cardShownAt: '2026-03-01T10:00:00.000Z',
    respondedAt: '2026-03-01T10:00:05.000Z',
    responseMilliseconds: 5_000,
    ...overrides,
  };
}

/** Records each metric call, dimensions included. */
function recordingMetrics() {
  const calls: Array<[string, number, Record<string, string> | undefined]> = [];
  return {
    calls,
    count: (name: string, value = 1, dimensions?: Record<string, string>) =>
      calls.push([name, value, dimensions]),
    observe: (name: string, value: number, _unit: string, dimensions?: Record<string, string>) =>
      calls.push([name, value, dimensions]),
  };
}

/** The sample chain's entries recorded as approver responses: the metrics emitted and the store. */
async function recordSampleResponses(ending: 'reject' | 'edit') {
  const dependencies = await createChainDependencies();
  await recordSampleChain(dependencies, 'run-1', ending);
  const metrics = recordingMetrics();
  const responses = new InMemoryApproverResponseStore();
  for (const entry of (await dependencies.chain.readEntries('run-1')) as ChainEntry[])
    await recordApproverResponse({ responses, metrics, logger: silentLogger }, entry);
  return { metrics, responses };
}

describe('approver responses from receipt entries', () => {
  it('takes each k-of-n approval and each decision its decider gave alone, never the decision that completed a tally', async () => {
    // Prepare: two approvals of turn 2 and the decision releasing it, then a rejection of turn 3
    const dependencies = await createChainDependencies();
    await recordSampleChain(dependencies, 'run-1', 'reject');
    const entries = (await dependencies.chain.readEntries('run-1')) as ChainEntry[];

    // Act
    const responses = entries.map(readApproverResponse);

    // Assess
    expect(responses.map((each) => each && [each.approver, each.outcome, each.responseMilliseconds])).toEqual(
      [['ana', 'approve', 30_000], ['bo', 'approve', 60_000], undefined, ['ana', 'reject', 60_000]],
    );
    expect(responses[0]?.groups).toEqual(['marketing']);
    expect(responses[3]?.groups).toEqual([EVERY_APPROVER_GROUP]);
  });

  it('emits the response time, the quick-approval and the reject flags per group, and keeps the response', async () => {
    // Act
    const { metrics, responses } = await recordSampleResponses('reject');

    // Assess
    expect(metrics.calls).toEqual([
      ['ApproverResponseTime', 30_000, { approverGroup: 'marketing' }],
      ['ApproverRejects', 0, { approverGroup: 'marketing' }],
      ['ApproverEdits', 0, { approverGroup: 'marketing' }],
      ['QuickApprovals', 0, { approverGroup: 'marketing' }],
      ['ApproverResponseTime', 60_000, { approverGroup: 'marketing' }],
      ['ApproverRejects', 0, { approverGroup: 'marketing' }],
      ['ApproverEdits', 0, { approverGroup: 'marketing' }],
      ['QuickApprovals', 0, { approverGroup: 'marketing' }],
      ['ApproverResponseTime', 60_000, { approverGroup: EVERY_APPROVER_GROUP }],
      ['ApproverRejects', 1, { approverGroup: EVERY_APPROVER_GROUP }],
      ['ApproverEdits', 0, { approverGroup: EVERY_APPROVER_GROUP }],
    ]);
    const listed = await responses.listResponses({
      from: new Date(0),
      to: new Date('2030-01-01'),
      limit: 10,
    });
    expect(listed.items).toHaveLength(3);
  });
});

describe('edits in approver analytics (issue #25)', () => {
  it('takes an edit as its editor’s response, flags it per group, and counts it apart from approvals and rejects', async () => {
    // Act: the sample's k-of-n turn, then ana edits a call of turn 3
    const { metrics, responses } = await recordSampleResponses('edit');
    const listed = await responses.listResponses({
      from: new Date(0),
      to: new Date('2030-01-01'),
      limit: 10,
    });
    const summary = summarizeApproverResponses(
      [...listed.items, response({ approver: 'ana', outcome: 'reject', sequence: 9 })],
      10,
    );

    // Assess
    expect(listed.items.map((each) => [each.approver, each.outcome])).toEqual([
      ['ana', 'approve'],
      ['bo', 'approve'],
      ['ana', 'edit'],
    ]);
    expect(metrics.calls.filter(([name]) => name === 'ApproverEdits')).toEqual([
      ['ApproverEdits', 0, { approverGroup: 'marketing' }],
      ['ApproverEdits', 0, { approverGroup: 'marketing' }],
      ['ApproverEdits', 1, { approverGroup: EVERY_APPROVER_GROUP }],
    ]);
    expect(metrics.calls.filter(([name]) => name === 'QuickApprovals')).toHaveLength(2);
    // an edit is neither an approval nor a rejection: a third of ana's three responses each
    const ana = summary.approvers[0];
    expect([ana?.approver, ana?.approvals, ana?.rejects, ana?.edits]).toEqual(['ana', 1, 1, 1]);
    expect([ana?.rejectRate, ana?.editShare]).toEqual([0.333, 0.333]);
    expect(summary.approvers[1]).toMatchObject({ approver: 'bo', edits: 0, editShare: 0 });
  });
});

describe('summarizeApproverResponses', () => {
  it('gives per group and per approver the times, the reject rate and the share of quick approvals', () => {
    // Prepare: ana approves in 2 s, 3 s and 40 s; bo rejects after 90 s; a card for two groups counts in both
    const responses = [
      response({ approver: 'ana', responseMilliseconds: 2_000, sequence: 1 }),
      response({ approver: 'ana', responseMilliseconds: 3_000, sequence: 2 }),
      response({
        approver: 'ana',
        responseMilliseconds: 40_000,
        sequence: 3,
        groups: ['finance', 'marketing'],
      }),
      response({ approver: 'bo', outcome: 'reject', responseMilliseconds: 90_000, sequence: 4 }),
    ];

    // Act
    const summary = summarizeApproverResponses(responses, 10);

    // Assess
    expect(summary.groups).toEqual([
      expect.objectContaining({ group: 'finance', responses: 1, quickApprovals: 0, quickApprovalShare: 0 }),
      {
        group: 'marketing',
        responses: 4,
        approvals: 3,
        rejects: 1,
        rejectRate: 0.25,
        edits: 0,
        editShare: 0,
        medianResponseSeconds: 3,
        p90ResponseSeconds: 90,
        quickApprovals: 2,
        quickApprovalShare: 0.667,
      },
    ]);
    expect(summary.approvers).toEqual([
      expect.objectContaining({
        approver: 'ana',
        groups: ['finance', 'marketing'],
        rejectRate: 0,
        quickApprovals: 2,
      }),
      expect.objectContaining({ approver: 'bo', approvals: 0, rejects: 1, quickApprovalShare: null }),
    ]);
  });
});

describe('readApproverAnalytics', () => {
  const admin = userProfileSchema.parse({ userId: 'ada', grants: ['admin'] });
  const approver = userProfileSchema.parse({ userId: 'ana', grants: ['agent_approve'] });
  const clock = { now: () => new Date('2026-03-31T00:00:00.000Z') };

  it('summarizes the responses of the last days for an admin, and refuses anyone else', async () => {
    // Prepare
    const responses = new InMemoryApproverResponseStore();
    await responses.recordResponse(response({ respondedAt: '2026-03-30T10:00:00.000Z', sequence: 1 }));
    await responses.recordResponse(response({ respondedAt: '2026-03-01T10:00:00.000Z', sequence: 2 }));
    await responses.recordResponse(response({ respondedAt: '2026-01-01T10:00:00.000Z', sequence: 3 }));

    // Act
    const week = await readApproverAnalytics({ responses, clock }, admin, { days: 7, quickSeconds: 10 });
    const month = await readApproverAnalytics({ responses, clock }, admin, { days: 31, quickSeconds: 1 });
    const refused = readApproverAnalytics({ responses, clock }, approver, { days: 7, quickSeconds: 10 });

    // Assess
    expect(week).toMatchObject({ from: '2026-03-24T00:00:00.000Z', responses: 1, truncated: false });
    expect(month).toMatchObject({ responses: 2, groups: [{ group: 'marketing', quickApprovals: 0 }] });
    await expect(refused).rejects.toMatchObject({ code: 'forbidden' });
  });
});
