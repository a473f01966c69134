import { describe, expect, it } from 'vitest';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import {
  APPROVER,
  createHarness,
  digestShownTo,
  OWNER,
  person,
  SECOND_APPROVER,
  startPausedRun,
  type UseCaseHarness,
} from './use-case-harness.js';

// Issue #20 item 2: an approval counts only while its approver still holds the authority it
// needed. When the K-th approval comes, every approval counted is re-checked against its
// approver's current record; one that no longer qualifies lapses, and the turn waits.

const LEGAL = { groups: ['legal'] };
const ALICE = { ...APPROVER, ...LEGAL };
const BOB = { ...SECOND_APPROVER, ...LEGAL };
const CAROL = person('carol', { grants: ['agent_approve'], ...LEGAL });

/** What happens to alice's record between her approval and bob's, and the configuration it matters under. */
const CHANGES: Array<[string, Record<string, unknown>, (harness: UseCaseHarness) => Promise<unknown>]> = [
  [
    'her agent_approve grant is revoked',
    {},
    (harness) => harness.dependencies.users.putUser({ ...ALICE, grants: [] }),
  ],
  [
    'her tool access no longer names the writer (the decision gate)',
    {},
    (harness) => harness.dependencies.users.putUser({ ...ALICE, toolAccess: [] }),
  ],
  ['her user record is deleted', {}, (harness) => harness.dependencies.users.deleteUser(ALICE.userId)],
  [
    'she left the group the card is routed to',
    { approverGroups: ['legal'] },
    (harness) => harness.dependencies.users.putUser({ ...ALICE, groups: ['finance'] }),
  ],
  [
    'she lost access to the page the write touches (the record gate)',
    { options: { decisionGate: 'record', requiredApprovals: 2 } },
    (harness) => harness.dependencies.users.putUser({ ...ALICE, pageAccess: [] }),
  ],
];

function twoApproverHarness(configuration: Record<string, unknown> = {}): UseCaseHarness {
  return createHarness({
    users: [OWNER, ALICE, BOB, CAROL],
    configuration: { options: { requiredApprovals: 2 }, ...configuration },
  });
}

const approve = (harness: UseCaseHarness, approver: UserProfile, runId: string, digest: string) =>
  decideRun(harness.dependencies, approver, runId, { decision: 'approve', digest });

describe('k-of-n approvals lapse when their approver no longer holds the authority (issue #20, item 2)', () => {
  it.each(CHANGES)(
    'when %s after approving, her approval stops counting and the turn waits',
    async (_change, configuration, change) => {
      // Prepare
      const harness = twoApproverHarness(configuration);
      const paused = await startPausedRun(harness);
      const digest = await digestShownTo(harness, BOB, paused.runId);
      expect(await approve(harness, ALICE, paused.runId, digest)).toMatchObject({ approvals: { count: 1 } });
      await change(harness);

      // Act
      const second = await approve(harness, BOB, paused.runId, digest);
      const { cards } = await listInbox(harness.dependencies, BOB, { limit: 100 });
      const third = await approve(harness, CAROL, paused.runId, digest);

      // Assess: bob's approval did not release the write; the card says whose approval lapsed.
      expect(second).toEqual({
        kind: 'approval-recorded',
        runId: paused.runId,
        turn: paused.turn,
        approvals: { count: 1, required: 2, approvedBy: ['bob'], lapsedApprovers: ['alice'] },
        message: TEXTS.approvalsLapsed(1, 2, ['alice']),
      });
      const card = cards.find((each) => each.runId === paused.runId);
      expect(card && 'approvals' in card ? card.approvals?.summary : undefined).toBe(
        TEXTS.approvalProgress(1, 2, ['bob'], ['alice']),
      );
      expect(third).toMatchObject({ kind: 'decided', decision: 'approve' });
      expect(harness.executions.resumed).toHaveLength(1);
      expect((await harness.runs.getDecision(paused.runId, paused.turn))?.approvedBy).toEqual([
        'bob',
        'carol',
      ]);
    },
  );

  it('counts an approver again who holds the authority again and approves again', async () => {
    // Prepare: alice's approval lapsed at bob's.
    const harness = twoApproverHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, BOB, paused.runId);
    await approve(harness, ALICE, paused.runId, digest);
    await harness.dependencies.users.putUser({ ...ALICE, grants: [] });
    await approve(harness, BOB, paused.runId, digest);
    await harness.dependencies.users.putUser(ALICE);

    // Act
    const again = await approve(harness, ALICE, paused.runId, digest);

    // Assess
    expect(again).toMatchObject({ kind: 'decided', decision: 'approve' });
    expect((await harness.runs.getDecision(paused.runId, paused.turn))?.approvedBy).toEqual(['alice', 'bob']);
  });

  it('re-checks nothing and reads no approver before the K-th approval', async () => {
    // Prepare
    const harness = twoApproverHarness();
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, BOB, paused.runId);
    await harness.dependencies.users.deleteUser(ALICE.userId);

    // Act: the only approval so far is alice's, whose record is already gone.
    const first = await approve(harness, ALICE, paused.runId, digest);

    // Assess: it is on record like any other; it is judged when the decision comes to complete.
    expect(first).toMatchObject({
      kind: 'approval-recorded',
      approvals: { count: 1, approvedBy: ['alice'] },
    });
  });
});
