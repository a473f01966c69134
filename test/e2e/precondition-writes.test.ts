import { describe, expect, it } from 'vitest';
import type { ApprovalCard } from '../../lambdas/core/approvals/approval-card.js';
import { unsealJson } from '../../lambdas/core/sealed-json.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { DEMO_CONFIGURATIONS, DEMO_USERS } from '../../lambdas/local/demo-data.js';
import { bodyOf } from '../support/api-answers.js';
import {
  type ResponseJson,
  settle,
  startRunAndSettle,
  type TestRuntime,
  useTestRuntime,
} from '../support/local-runtime.js';
import { decide } from './approvers-support.js';

const APPEND = 'append_page_keywords';

/** Lets the demo configurations offer the relative writer, and the demo approvers approve it. */
async function allowAppend(runtime: TestRuntime): Promise<void> {
  for (const configuration of DEMO_CONFIGURATIONS) {
    await runtime.dependencies.configurations.putConfiguration({
      ...configuration,
      allowedTools: [...configuration.allowedTools, APPEND],
    });
  }
  for (const user of DEMO_USERS) {
    if (Array.isArray(user.toolAccess) && user.toolAccess.length > 0) {
      await runtime.dependencies.users.putUser({ ...user, toolAccess: [...user.toolAccess, APPEND] });
    }
  }
}

async function inboxCard(runtime: TestRuntime, runId: string): Promise<ResponseJson> {
  const inbox = await runtime.client('approver').listInbox({ query: { limit: 100 } });
  expect(inbox.status).toBe(200);
  return bodyOf(inbox).cards.find((card: ResponseJson) => card.runId === runId);
}

async function keywordsOf(runtime: TestRuntime, pageId: string): Promise<string | undefined> {
  return (await runtime.dependencies.pages.getPage(pageId))?.keywords;
}

function appendInstruction(pageId: string, keywords: string[]): string {
  return `Call ${APPEND} with ${JSON.stringify({ pageId, keywords })}`;
}

describe('writes that cannot go stale (issue #15, item 1)', () => {
  const runtime = useTestRuntime();

  it('applies an approved append on the first approval when the page did not change', async () => {
    // Prepare
    await allowAppend(runtime);
    await runtime.dependencies.pages.updateMetadata('14', { keywords: 'autumn' }, 'admin');
    const { runId, view } = await startRunAndSettle(runtime, appendInstruction('14', ['harvest']));
    expect(view.status).toBe('waiting');
    const card = await inboxCard(runtime, runId);

    // Act
    const approval = await decide(runtime, runId, { digest: card.digest, decision: 'approve' });
    const done = await settle(runtime, runId, 'editor', view.turn);

    // Assess
    expect(approval.status).toBe(200);
    expect(card.pendingTools[0].recordChanged).toBeUndefined();
    expect(card.pendingTools[0].preview).toEqual({
      status: 'shown',
      lines: ['Page 14 (de): 1 keyword would be added.', 'keywords: "autumn" → "autumn, harvest"'],
      caveat: TEXTS.previewPreconditionCaveat,
    });
    expect(done.status).toBe('completed');
    expect(await keywordsOf(runtime, '14')).toBe('autumn, harvest');
    expect(done.transcript.finalAnswer).toContain(`Done: ${APPEND} succeeded.`);
  });

  it('does not apply an approval whose page changed after the card was shown: a fresh card asks again, then it applies once', async () => {
    // Prepare: the card is shown, then an editor changes the page before the approval runs.
    await allowAppend(runtime);
    await runtime.dependencies.pages.updateMetadata('12', { keywords: 'spring' }, 'admin');
    const { runId, view } = await startRunAndSettle(runtime, appendInstruction('12', ['sale']));
    const first = await inboxCard(runtime, runId);
    expect(first.pendingTools[0].preview.lines).toContain('keywords: "spring" → "spring, sale"');
    await runtime.dependencies.pages.updateMetadata('12', { keywords: 'summer' }, 'admin');

    // Act
    const approval = await decide(runtime, runId, { digest: first.digest, decision: 'approve' });
    const reopened = await settle(runtime, runId, 'editor', view.turn);

    // Assess: not written, the model was told nothing, and a fresh card with a new digest.
    expect(approval.status).toBe(200);
    expect(reopened.status).toBe('waiting');
    expect(reopened.turn).toBe(view.turn + 1);
    expect(await keywordsOf(runtime, '12')).toBe('summer');
    expect(reopened.transcript.messages).toBe(view.transcript.messages);
    const second = await inboxCard(runtime, runId);
    expect(second.digest).not.toBe(first.digest);
    expect(second.pendingTools[0]).toMatchObject({ tool: APPEND, recordChanged: TEXTS.recordChanged });
    expect(second.pendingTools[0].preview.lines).toContain('keywords: "summer" → "summer, sale"');
    const html = (
      await runtime.client('approver').listInbox({ query: { limit: 100 }, headers: { accept: 'text/html' } })
    ).text;
    expect(html).toContain(TEXTS.recordChanged);
    // The audit keeps the approval that was not applied, under its own turn and digest.
    const audit = await runtime.dependencies.runs.getDecision(runId, view.turn);
    expect(audit).toMatchObject({ decision: 'approve', digest: first.digest });
    // The old approval does not carry over: its digest is refused on the new card.
    const stale = await decide(runtime, runId, { digest: first.digest, decision: 'approve' });
    expect(stale.status).toBe(409);
    // The version is sealed with the card, never part of what a client is shown.
    const stored = await runtime.dependencies.runs.getCard(runId);
    const sealed = stored
      ? ((await unsealJson(
          runtime.dependencies.sealer,
          'approval-card',
          runId,
          stored.sealedCard,
        )) as ApprovalCard)
      : undefined;
    expect(sealed?.pendingCalls[0]?.precondition).toMatch(/^page-keywords:/);
    expect(JSON.stringify(second)).not.toContain(sealed?.pendingCalls[0]?.precondition);

    // Act: approve the fresh card.
    const again = await decide(runtime, runId, { digest: second.digest, decision: 'approve' });
    const done = await settle(runtime, runId, 'editor', reopened.turn);

    // Assess: applied once, on the page as the second card showed it.
    expect(again.status).toBe(200);
    expect(done.status).toBe('completed');
    expect(await keywordsOf(runtime, '12')).toBe('summer, sale');
    expect(done.transcript.toolCalls).toBe(1);
    expect(done.transcript.finalAnswer.match(/Done: append_page_keywords succeeded\./g)).toHaveLength(1);
  });

  it('writes on the record it checked in one conditional write: an edit landing between the check and the write asks again (issue #20, item 8)', async () => {
    // Prepare: the edit lands after the loop compared the versions, right before the write.
    await allowAppend(runtime);
    await runtime.dependencies.pages.updateMetadata('12', { keywords: 'spring' }, 'admin');
    const { runId, view } = await startRunAndSettle(runtime, appendInstruction('12', ['race']));
    const first = await inboxCard(runtime, runId);
    const pages = runtime.dependencies.pages;
    const applyMetadata = pages.applyMetadata;
    pages.applyMetadata = async (pageId, write) => {
      pages.applyMetadata = applyMetadata;
      await pages.updateMetadata('12', { keywords: 'spring, edited meanwhile' }, 'admin');
      return applyMetadata.call(pages, pageId, write);
    };

    // Act
    const approval = await decide(runtime, runId, { digest: first.digest, decision: 'approve' });
    const reopened = await settle(runtime, runId, 'editor', view.turn);
    const second = await inboxCard(runtime, runId);
    const again = await decide(runtime, runId, { digest: second.digest, decision: 'approve' });
    const done = await settle(runtime, runId, 'editor', reopened.turn);

    // Assess: the edit was not written over; a fresh card showed it; then the append applied once.
    expect(approval.status).toBe(200);
    expect(reopened.status).toBe('waiting');
    expect(reopened.turn).toBe(view.turn + 1);
    expect(reopened.transcript.messages).toBe(view.transcript.messages);
    expect(second.pendingTools[0]).toMatchObject({ tool: APPEND, recordChanged: TEXTS.recordChanged });
    expect(second.pendingTools[0].preview.lines).toContain(
      'keywords: "spring, edited meanwhile" → "spring, edited meanwhile, race"',
    );
    expect(again.status).toBe(200);
    expect(done.status).toBe('completed');
    expect(await keywordsOf(runtime, '12')).toBe('spring, edited meanwhile, race');
    expect(done.transcript.toolCalls).toBe(1);
  });

  it('asks every one of k approvers again when the page changed before the k-th approval', async () => {
    // Prepare: two approvals needed; the page changes between the first and the second.
    await allowAppend(runtime);
    await runtime.dependencies.pages.updateMetadata('14', { keywords: 'winter' }, 'admin');
    const { runId, view } = await startRunAndSettle(runtime, appendInstruction('14', ['snow']), {
      configurationId: 'demo-two-approvers',
    });
    const first = await inboxCard(runtime, runId);
    expect(
      (await decide(runtime, runId, { digest: first.digest, decision: 'approve' }, 'approver')).status,
    ).toBe(202);
    await runtime.dependencies.pages.updateMetadata('14', { keywords: 'winter, ice' }, 'admin');

    // Act
    const kth = await decide(runtime, runId, { digest: first.digest, decision: 'approve' }, 'reviewer');
    const reopened = await settle(runtime, runId, 'editor', view.turn);

    // Assess: nobody's approval carries over to the fresh card.
    expect(kth.status).toBe(200);
    expect(reopened.status).toBe('waiting');
    expect(await keywordsOf(runtime, '14')).toBe('winter, ice');
    const second = await inboxCard(runtime, runId);
    expect(second.approvals).toMatchObject({ required: 2, approvedBy: [] });
    expect(
      (await decide(runtime, runId, { digest: second.digest, decision: 'approve' }, 'approver')).status,
    ).toBe(202);
    expect(
      (await decide(runtime, runId, { digest: second.digest, decision: 'approve' }, 'reviewer')).status,
    ).toBe(200);
    expect((await settle(runtime, runId, 'editor', reopened.turn)).status).toBe('completed');
    expect(await keywordsOf(runtime, '14')).toBe('winter, ice, snow');
  });
});
