import { expect, it } from 'vitest';
import {
  APPROVAL_RECORD_SCHEMA_VERSION,
  type ApprovalRecord,
  readCardShown,
} from '../../lambdas/core/approvals/decision-record.js';
import type { StoredCard } from '../../lambdas/core/approvals/stored-card.js';
import { makeCard, makeDecision, shownCard, testEveryRunRepository } from './repository-contract-support.js';

testEveryRunRepository('decisions', (adapters) => {
  it('lets exactly one of 50 concurrent claims win and shows the others the winner', async () => {
    // Prepare
    const claims = Array.from({ length: 50 }, (_, index) =>
      makeDecision('run-race', `approver-${index}`, { decision: index % 2 === 0 ? 'approve' : 'reject' }),
    );

    // Act
    const outcomes = await Promise.all(claims.map((claim) => adapters.runs.claimDecision(claim)));

    // Assess
    const winners = outcomes.flatMap((outcome, index) => (outcome.kind === 'claimed' ? [claims[index]] : []));
    expect(winners).toHaveLength(1);
    const stored = await adapters.runs.getDecision('run-race', 3);
    expect(stored).toEqual(winners[0]);
    for (const outcome of outcomes) {
      if (outcome.kind === 'already-decided') expect(outcome.existing).toEqual(stored);
    }
  });

  it('keeps one record per turn and never overwrites it', async () => {
    // Prepare
    const first = makeDecision('run-turns', 'alice', { turn: 1, reason: 'looks right' });
    const second = makeDecision('run-turns', 'bob', {
      turn: 2,
      decision: 'reject',
      cardShown: shownCard([{ tool: 'x', arguments: { kept: 1 }, preview: 'none' }]),
    });

    // Act
    const firstOutcome = await adapters.runs.claimDecision(first);
    const secondOutcome = await adapters.runs.claimDecision(second);
    const again = await adapters.runs.claimDecision({
      ...first,
      decidedBy: 'mallory',
      decision: 'reject',
    });

    // Assess
    expect(firstOutcome).toEqual({ kind: 'claimed' });
    expect(secondOutcome).toEqual({ kind: 'claimed' });
    expect(again).toEqual({ kind: 'already-decided', existing: first });
    expect(await adapters.runs.getDecision('run-turns', 2)).toEqual(second);
    expect(await adapters.runs.getDecision('run-turns', 9)).toBeUndefined();
  });

  it('keeps a card shown whatever JSON its arguments hold (issue #20)', async () => {
    // Prepare: what DynamoDB cannot hold as attributes: a number past 2^53 and past 1e125,
    // an empty key, a `constructor` key, a lone surrogate and 40 levels.
    let deep: unknown = 'bottom';
    for (let level = 0; level < 40; level += 1) deep = level % 2 === 0 ? [deep] : { '': deep };
    const shownArguments = {
      big: 2 ** 60,
      huge: 1e300,
      '': 'empty key',
      constructor: { prototype: 1 },
      text: 'x\uD800y',
      deep,
    };
    const record = makeDecision('run-any-json', 'alice', {
      cardShown: shownCard([{ tool: 'accept_anything', arguments: shownArguments, preview: 'none' }]),
    });

    // Act
    const claim = await adapters.runs.claimDecision(record);
    const stored = await adapters.runs.getDecision('run-any-json', record.turn);

    // Assess
    expect(claim).toEqual({ kind: 'claimed' });
    expect(stored).toEqual(record);
    expect(readCardShown(stored?.cardShown ?? '').calls[0]?.arguments).toEqual(
      JSON.parse(JSON.stringify(shownArguments)),
    );
  });

  it('tallies k-of-n approvals once per approver, only while the card waits at that turn and digest', async () => {
    // Prepare
    const card = makeCard('run-tally', '2026-03-01T10:00:00.000Z');
    await adapters.runs.putCard(card);
    const approval = (
      approvedBy: string,
      overrides: { digest?: string; turn?: number } = {},
    ): ApprovalRecord => ({
      schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
      channel: 'api',
      runId: 'run-tally',
      turn: overrides.turn ?? card.turn,
      digest: overrides.digest ?? card.digest,
      approvedBy,
      approvedAt: '2026-03-01T11:00:00.000Z',
    });

    // Act
    const first = await adapters.runs.recordApproval(approval('alice'));
    const repeated = await adapters.runs.recordApproval(approval('alice'));
    const second = await adapters.runs.recordApproval(approval('bob'));
    const staleDigest = await adapters.runs.recordApproval(approval('carol', { digest: 'c'.repeat(64) }));
    const otherTurn = await adapters.runs.recordApproval(approval('carol', { turn: card.turn + 1 }));
    const stored = await adapters.runs.getCard('run-tally');
    await adapters.runs.closeCard('run-tally', 'decided');
    const afterClose = await adapters.runs.recordApproval(approval('dave'));

    // Assess
    expect(first).toEqual({
      kind: 'recorded',
      approvedBy: ['alice'],
      delegatedApprovals: [],
      approvalContents: [],
    });
    expect(repeated).toEqual({
      kind: 'recorded',
      approvedBy: ['alice'],
      delegatedApprovals: [],
      approvalContents: [],
    });
    expect(second).toEqual({
      kind: 'recorded',
      approvedBy: ['alice', 'bob'],
      delegatedApprovals: [],
      approvalContents: [],
    });
    expect(staleDigest).toEqual({ kind: 'card-moved' });
    expect(otherTurn).toEqual({ kind: 'card-moved' });
    expect(afterClose).toEqual({ kind: 'card-moved' });
    expect(stored?.approvedBy).toEqual(['alice', 'bob']);
  });

  it('takes lapsed approvals out of the tally and names them, only while the card waits; approving again counts again', async () => {
    // Prepare
    const card = makeCard('run-lapse', '2026-03-01T10:00:00.000Z');
    await adapters.runs.putCard(card);
    const approval = (approvedBy: string): ApprovalRecord => ({
      schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
      channel: 'api',
      runId: 'run-lapse',
      turn: card.turn,
      digest: card.digest,
      approvedBy,
      approvedAt: '2026-03-01T11:00:00.000Z',
    });
    for (const approver of ['alice', 'bob', 'carol']) await adapters.runs.recordApproval(approval(approver));
    const at = { runId: 'run-lapse', turn: card.turn, digest: card.digest };

    // Act
    const lapsed = await adapters.runs.lapseApprovals({ ...at, approvers: ['alice', 'carol'] });
    const stored = await adapters.runs.getCard('run-lapse');
    const staleDigest = await adapters.runs.lapseApprovals({
      ...at,
      digest: 'c'.repeat(64),
      approvers: ['bob'],
    });
    const again = await adapters.runs.recordApproval(approval('alice'));
    await adapters.runs.putCard({
      ...(await adapters.runs.getCard('run-lapse')),
      sealedToken: Uint8Array.from([9]),
    } as StoredCard);
    const rewritten = await adapters.runs.getCard('run-lapse');
    await adapters.runs.closeCard('run-lapse', 'decided');
    const afterClose = await adapters.runs.lapseApprovals({ ...at, approvers: ['bob'] });

    // Assess
    expect(lapsed).toEqual({ kind: 'lapsed', approvedBy: ['bob'], lapsedApprovers: ['alice', 'carol'] });
    expect(stored).toMatchObject({ approvedBy: ['bob'], lapsedApprovers: ['alice', 'carol'] });
    expect(staleDigest).toEqual({ kind: 'card-moved' });
    expect(again).toEqual({
      kind: 'recorded',
      approvedBy: ['alice', 'bob'],
      delegatedApprovals: [],
      approvalContents: [],
    });
    expect(rewritten).toMatchObject({ approvedBy: ['alice', 'bob'], lapsedApprovers: ['alice', 'carol'] });
    expect(afterClose).toEqual({ kind: 'card-moved' });
  });

  it('keeps the tally when a card is written again (a re-entered wait)', async () => {
    // Prepare
    const card = makeCard('run-reentered', '2026-03-01T10:00:00.000Z');
    await adapters.runs.putCard(card);
    await adapters.runs.recordApproval({
      schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
      channel: 'api',
      runId: 'run-reentered',
      turn: card.turn,
      digest: card.digest,
      approvedBy: 'alice',
      approvedAt: '2026-03-01T11:00:00.000Z',
    });
    const existing = await adapters.runs.getCard('run-reentered');

    // Act
    await adapters.runs.putCard({ ...(existing as StoredCard), sealedToken: Uint8Array.from([9]) });

    // Assess
    expect((await adapters.runs.getCard('run-reentered'))?.approvedBy).toEqual(['alice']);
  });
});
