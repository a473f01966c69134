import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UserProfile } from '../../lambdas/core/identity.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, openedCard, type RequestBody, refusalOf } from '../support/api-answers.js';
import { apiClientWithToken, settle, useTestRuntime } from '../support/local-runtime.js';
import { readRunEvents } from '../support/server-sent-events.js';
import { createUser, decide, recordWritesAndDeliveries } from './approvers-support.js';

/** demo-two-approvers: four-eyes, K = 2. */
describe('k-of-n approvals', () => {
  const runtime = useTestRuntime();
  const owner: UserProfile = {
    userId: 'owner-approver',
    displayName: 'Olli Owner',
    grants: ['agent_run', 'agent_approve'],
    pageAccess: '*',
    languageAccess: '*',
    toolAccess: ['update_page_metadata'],
  };
  const thirdApprover: UserProfile = { ...owner, userId: 'third-approver', grants: ['agent_approve'] };
  const tokens: Record<string, string> = {};
  const pageWrites: string[] = [];
  const deliveries: string[] = [];

  beforeAll(async () => {
    tokens[owner.userId] = await createUser(runtime, owner);
    tokens[thirdApprover.userId] = await createUser(runtime, thirdApprover);
    for (const demoUser of ['approver', 'reviewer', 'admin'])
      tokens[demoUser] = runtime.tokens[demoUser] ?? '';
    recordWritesAndDeliveries(runtime, { pageWrites, deliveries });
  });

  const decideAs = (userId: string, runId: string, body: RequestBody<'decideRun'>) =>
    apiClientWithToken(runtime.url, tokens[userId] ?? '').decideRun({ path: { id: runId }, body });

  async function waitingRun(input: string) {
    const started = await apiClientWithToken(runtime.url, tokens[owner.userId] ?? '').startRun({
      body: { configurationId: 'demo-two-approvers', input },
    });
    expect(started.status).toBe(202);
    const runId = bodyOf(started).runId as string;
    const view = await settle(runtime, runId, 'admin');
    expect(view.status).toBe('waiting');
    return { runId, digest: view.digest as string, turn: view.turn as number };
  }

  it('delivers once and writes once for 50 concurrent approvals from 5 approvers; two approvals audited, the owner excluded', async () => {
    // Prepare
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'two of five'");
    const approvers = [owner.userId, 'approver', 'reviewer', 'admin', thirdApprover.userId];
    const writesBefore = pageWrites.length;
    const deliveriesBefore = deliveries.length;

    // Act: ten approvals from each, interleaved
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) => {
        const userId = approvers[index % approvers.length] ?? '';
        return decideAs(userId, runId, { digest, decision: 'approve' }).then((answer) => ({
          userId,
          ...answer,
        }));
      }),
    );
    const finished = await settle(runtime, runId, 'admin', turn);

    // Assess: the owner never counts; everyone else is answered 202 (on record) or 200 (decided)
    for (const answer of answers.filter((each) => each.userId === owner.userId)) {
      expect(answer.status).toBe(403);
      expect(refusalOf(answer).error.message).toBe(TEXTS.gateFourEyes);
    }
    const others = answers.filter((each) => each.userId !== owner.userId);
    for (const answer of others) expect([200, 202]).toContain(answer.status);
    expect(
      others.filter((answer) => answer.status === 200 && bodyOf(answer).repeated === false),
    ).toHaveLength(1);
    expect(deliveries.slice(deliveriesBefore)).toEqual(['delivered']);
    expect(pageWrites.slice(writesBefore)).toEqual([JSON.stringify({ keywords: 'two of five' })]);
    expect(finished.status).toBe('completed');

    const decision = await runtime.dependencies.runs.getDecision(runId, turn);
    expect(decision).toMatchObject({ decision: 'approve', digest });
    expect(decision?.approvedBy).toHaveLength(2);
    expect(decision?.approvedBy).not.toContain(owner.userId);
    expect(decision?.decidedBy && decision.approvedBy?.includes(decision.decidedBy)).toBe(true);

    // Every approval on record names this turn's digest, and the owner has none.
    const approvals = await runtime.dynamo.documentClient.send(
      new QueryCommand({
        TableName: runtime.dynamo.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :approvals)',
        ExpressionAttributeValues: { ':pk': `RUN#${runId}`, ':approvals': 'APPROVAL#' },
        ConsistentRead: true,
      }),
    );
    const items = approvals.Items ?? [];
    expect(items.length).toBeGreaterThanOrEqual(2);
    for (const item of items) expect(item).toMatchObject({ runId, turn, digest });
    expect(items.map((item) => item.approvedBy)).not.toContain(owner.userId);
    for (const approver of decision?.approvedBy ?? []) {
      expect(items.map((item) => item.approvedBy)).toContain(approver);
    }
  });

  it('shows "1 of 2 approvals — approved by …" on the card (JSON and page) and waits for the second approver', async () => {
    // Prepare
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'one of two'");
    const deliveriesBefore = deliveries.length;

    // Act
    const first = await decide(runtime, runId, { digest, decision: 'approve' }, 'approver');
    const repeated = await decide(runtime, runId, { digest, decision: 'approve' }, 'approver');
    const inbox = await runtime.client('reviewer').listInbox();
    const page = await runtime.client('reviewer').listInbox({ headers: { accept: 'text/html' } });
    const view = await runtime.client('admin').getRun({ path: { id: runId } });
    const stream = await readRunEvents(runtime, runId, 'admin');

    // Assess: one approver twice is still one approval; nothing delivered yet
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ kind: 'approval-recorded', approvals: { count: 1, required: 2 } });
    expect(bodyOf(first, 202).message).toBe(TEXTS.approvalRecorded(1, 2));
    expect(repeated.status).toBe(202);
    expect(bodyOf(repeated, 202).approvals).toEqual({ count: 1, required: 2, approvedBy: ['approver'] });
    expect(deliveries.length).toBe(deliveriesBefore);
    const card = openedCard(bodyOf(inbox).cards.find((each) => each.runId === runId));
    const summary = '1 of 2 approvals — approved by approver';
    expect(card.approvals).toEqual({ count: 1, required: 2, approvedBy: ['approver'], summary });
    // The page shows the same sentence with the approver's id isolated like every value.
    expect(page.text).toContain('1 of 2 approvals — approved by <bdi>approver</bdi>');
    expect(bodyOf(view).status).toBe('waiting');
    expect(bodyOf(view).approvals?.summary).toBe(summary);
    // The streamed awaiting_approval event carries the same tally.
    const awaiting = stream.events.find((event) => event.event === 'awaiting_approval');
    expect(awaiting?.data.approvals).toEqual({ count: 1, required: 2, approvedBy: ['approver'], summary });

    // Act: the second distinct approver releases the write
    const second = await decide(runtime, runId, { digest, decision: 'approve' }, 'reviewer');
    const finished = await settle(runtime, runId, 'admin', turn);

    // Assess
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ kind: 'decided', decision: 'approve', repeated: false });
    expect(deliveries.slice(deliveriesBefore)).toEqual(['delivered']);
    expect(finished.status).toBe('completed');
    expect((await runtime.dependencies.runs.getDecision(runId, turn))?.approvedBy).toEqual([
      'approver',
      'reviewer',
    ]);
  });

  it('stops counting an approval whose approver lost the grant before the K-th: the turn waits, and the card and the stream say whose', async () => {
    // Prepare: an approver approves, then an admin revokes their agent_approve grant.
    const lapsing: UserProfile = { ...owner, userId: 'lapsing-approver', grants: ['agent_approve'] };
    tokens[lapsing.userId] = await createUser(runtime, lapsing);
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'lapsed once'");
    const writesBefore = pageWrites.length;
    const deliveriesBefore = deliveries.length;
    expect((await decideAs(lapsing.userId, runId, { digest, decision: 'approve' })).status).toBe(202);
    const revoked = await runtime
      .client('admin')
      .putUser({ path: { id: lapsing.userId }, body: { ...lapsing, grants: [] } });
    expect(revoked.status).toBe(200);

    // Act
    const second = await decideAs(thirdApprover.userId, runId, { digest, decision: 'approve' });
    const stream = await readRunEvents(runtime, runId, 'admin');
    const view = await runtime.client('admin').getRun({ path: { id: runId } });
    const deliveriesAfterSecond = deliveries.length;
    const completing = await decide(runtime, runId, { digest, decision: 'approve' }, 'reviewer');
    const finished = await settle(runtime, runId, 'admin', turn);

    // Assess: the second approval did not release the write; every surface names the lapsed one.
    expect(second.status).toBe(202);
    const tally = {
      count: 1,
      required: 2,
      approvedBy: [thirdApprover.userId],
      lapsedApprovers: [lapsing.userId],
    };
    expect(bodyOf(second, 202).approvals).toEqual(tally);
    expect(bodyOf(second, 202).message).toBe(TEXTS.approvalsLapsed(1, 2, [lapsing.userId]));
    expect(deliveriesAfterSecond).toBe(deliveriesBefore);
    const summary = TEXTS.approvalProgress(1, 2, [thirdApprover.userId], [lapsing.userId]);
    expect(bodyOf(view).approvals).toEqual({ ...tally, summary });
    const awaiting = stream.events.find((event) => event.event === 'awaiting_approval');
    expect(awaiting?.data.approvals).toEqual({ ...tally, summary });
    expect(completing.status).toBe(200);
    expect(deliveries.slice(deliveriesBefore)).toEqual(['delivered']);
    expect(pageWrites.slice(writesBefore)).toEqual([JSON.stringify({ keywords: 'lapsed once' })]);
    expect(finished.status).toBe('completed');
    expect((await runtime.dependencies.runs.getDecision(runId, turn))?.approvedBy).toEqual([
      'reviewer',
      thirdApprover.userId,
    ]);
  });

  it('ends the turn on a reject by anyone, even after an approval; a later approval is a conflict', async () => {
    // Prepare
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'rejected after one'");
    const writesBefore = pageWrites.length;
    expect((await decide(runtime, runId, { digest, decision: 'approve' }, 'approver')).status).toBe(202);

    // Act
    const reject = await decide(runtime, runId, { digest, decision: 'reject', reason: 'no' }, 'reviewer');
    const lateApproval = await decide(runtime, runId, { digest, decision: 'approve' }, 'admin');
    const finished = await settle(runtime, runId, 'admin', turn);

    // Assess
    expect(reject.status).toBe(200);
    expect(reject.body).toMatchObject({ kind: 'decided', decision: 'reject' });
    expect(lateApproval.status).toBe(409);
    expect(pageWrites.length).toBe(writesBefore);
    expect((await runtime.dependencies.runs.getDecision(runId, turn))?.decision).toBe('reject');
    expect(finished.status).not.toBe('waiting');
  });
});
