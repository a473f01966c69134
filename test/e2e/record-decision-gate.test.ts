import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, openedCard, refusalOf } from '../support/api-answers.js';
import { settle, startRunAndSettle, useTestRuntime } from '../support/local-runtime.js';
import { decide } from './approvers-support.js';

/**
 * demo-record-gate sets `decisionGate: 'record'`: approving needs the approver to pass the
 * record check of every write (seed 000's issue #662, option 3). ops-approver holds the tool
 * authority but no page rights; approver holds both.
 */
describe("the record decision gate (decisionGate: 'record')", () => {
  const runtime = useTestRuntime();

  async function waitingRun(input: string) {
    const { runId, view } = await startRunAndSettle(runtime, input, { configurationId: 'demo-record-gate' });
    expect(view.status).toBe('waiting');
    return { runId, digest: view.digest as string, turn: view.turn as number };
  }

  it('refuses an approver who may not see the record (403), shows why on the card, and lets them reject', async () => {
    // Prepare
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'ops refused'");
    const refusal = TEXTS.gateRecordRefused('update_page_metadata');

    // Act
    const inbox = await runtime.client('ops-approver').listInbox();
    const page = await runtime.client('ops-approver').listInbox({ headers: { accept: 'text/html' } });
    const approve = await decide(runtime, runId, { digest, decision: 'approve' }, 'ops-approver');
    const reject = await decide(runtime, runId, { digest, decision: 'reject' }, 'ops-approver');
    const finished = await settle(runtime, runId, 'editor', turn);

    // Assess
    const card = openedCard(bodyOf(inbox).cards.find((each) => each.runId === runId));
    expect(card.approveRefusal).toBe(refusal);
    const cardHtml = page.text.slice(page.text.indexOf(`data-run-id="${runId}"`));
    const articleHtml = cardHtml.slice(0, cardHtml.indexOf('</article>'));
    expect(articleHtml).toContain('<button type="button" class="approve" disabled>Approve</button>');
    expect(articleHtml).toContain('<button type="button" class="reject">Reject</button>');
    expect(articleHtml).toContain('class="approve-refusal"');
    expect(approve.status).toBe(403);
    expect(refusalOf(approve).error.message).toBe(refusal);
    expect(reject.status).toBe(200);
    expect(reject.body).toMatchObject({ kind: 'decided', decision: 'reject' });
    expect(finished.status).not.toBe('waiting');
    expect((await runtime.dependencies.pages.getPage('12'))?.keywords).not.toBe('ops refused');
  });

  it('lets an approver who may see the record approve, with Approve enabled on their card', async () => {
    // Prepare
    const { runId, digest, turn } = await waitingRun("Set the keywords of page 12 to 'record approved'");

    // Act
    const inbox = await runtime.client('approver').listInbox();
    const approve = await decide(runtime, runId, { digest, decision: 'approve' }, 'approver');
    const finished = await settle(runtime, runId, 'editor', turn);

    // Assess
    const card = openedCard(bodyOf(inbox).cards.find((each) => each.runId === runId));
    expect(card.approveRefusal).toBeUndefined();
    expect(approve.status).toBe(200);
    expect(finished.status).toBe('completed');
    expect((await runtime.dependencies.pages.getPage('12'))?.keywords).toBe('record approved');
  });

  it('keeps the tool gate for configurations that leave the default: ops-approver may still approve there', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'tool gate'");

    // Act
    const approve = await decide(
      runtime,
      runId,
      { digest: view.digest, decision: 'approve' },
      'ops-approver',
    );

    // Assess
    expect(approve.status).toBe(200);
  });
});
