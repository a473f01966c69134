import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCAL_RECEIPT_PUBLIC_KEY_FILE } from '../../lambdas/adapters/local-receipt-signer.js';
import { hashJson, hashOf } from '../../lambdas/core/receipts/entry-hashes.js';
import { verifyReceipt } from '../../lambdas/core/receipts/verify-receipt.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, openedCard, refusalOf } from '../support/api-answers.js';
import { type ResponseJson, settle, useTestRuntime } from '../support/local-runtime.js';
import { preparePeople, recordWritesAndDeliveries } from './approvers-support.js';

/** An approver of the pages the runs write; `agent_run` too for the owner. */
const person = (userId: string, grants: Array<'agent_run' | 'agent_approve'>) => ({
  userId,
  displayName: userId,
  grants,
  pageAccess: ['12', '14', '20'],
  languageAccess: '*' as const,
  toolAccess: ['update_page_metadata'],
});

const configuration = (configurationId: string, options: Record<string, unknown> = {}) => ({
  configurationId,
  label: `Pages ${configurationId}`,
  provider: 'scripted' as const,
  model: 'scripted-v1',
  allowedTools: ['get_page', 'update_page_metadata'],
  options,
});

describe('per-call decisions and edits (issue #22, parts 1 and 2)', () => {
  const runtime = useTestRuntime();
  const { as, prepare } = preparePeople(
    runtime,
    [
      person('alice', ['agent_approve']),
      person('ben', ['agent_approve']),
      person('carl', ['agent_approve']),
      person('olga', ['agent_run', 'agent_approve']),
    ],
    [
      configuration('pc-writes', { revealRejectionReason: true }),
      configuration('pc-four-eyes', { fourEyes: true }),
      configuration('pc-two', { fourEyes: true, requiredApprovals: 2 }),
    ],
  );
  /** A run of two calls (page 12 and page 14), waiting on its card. */
  const startTwoCalls = async (configurationId: string, tag: string) => {
    await prepare();
    const started = await as('olga').startRun({
      body: {
        configurationId,
        input: `Set the title of page 12 to '${tag} twelve' and the title of page 14 to '${tag} fourteen'`,
      },
    });
    const runId = bodyOf(started).runId;
    const view = await settle(runtime, runId, 'admin');
    expect(view.status).toBe('waiting');
    return { runId, view };
  };
  /** The run's receipt (GET /runs/{id}/receipt) as the verifier reads it, and its stored entries. */
  const verifiedReceiptOf = async (runId: string) => {
    const receipt = bodyOf(await runtime.client('admin').getRunReceipt({ path: { id: runId } }));
    const publicKey = createPublicKey(
      await readFile(
        join(runtime.baseDirectory, '.countersign', 'keys', LOCAL_RECEIPT_PUBLIC_KEY_FILE),
        'utf8',
      ),
    );
    return { verification: verifyReceipt(receipt, { publicKey }, { runId }), entries: receipt.entries };
  };
  const titleOf = async (pageId: string) => (await runtime.dependencies.pages.getPage(pageId))?.title;
  const cardOf = async (userId: string, runId: string) =>
    openedCard(
      (bodyOf(await as(userId).listInbox({ query: { limit: 100 } })).cards as ResponseJson[]).find(
        (card) => card.runId === runId,
      ),
    );

  it('runs the approved call, refuses the other with its reason, and tells the model each', async () => {
    // Prepare
    const { runId, view } = await startTwoCalls('pc-writes', 'Split');

    // Act
    const decided = await as('alice').decideRun({
      path: { id: runId },
      body: {
        digest: view.digest,
        decision: 'approve',
        calls: [{ index: 1, decision: 'reject', reason: 'Page 14 is frozen.' }],
      },
    });
    const finished = await settle(runtime, runId, 'admin', view.turn);

    // Assess
    expect(bodyOf(decided, 200)).toMatchObject({
      kind: 'decided',
      decision: 'approve',
      choices: [
        { index: 0, tool: 'update_page_metadata', decision: 'approve' },
        { index: 1, tool: 'update_page_metadata', decision: 'reject', reason: 'Page 14 is frozen.' },
      ],
      repeated: false,
    });
    expect(finished.status).toBe('completed');
    expect(await titleOf('12')).toBe('Split twelve');
    expect(await titleOf('14')).not.toBe('Split fourteen');
    expect(finished.transcript.finalAnswer).toContain('Done: update_page_metadata succeeded.');
    expect(finished.transcript.finalAnswer).toContain(
      `${TEXTS.toolDenied('update_page_metadata')}${TEXTS.callRejectedNote('Page 14 is frozen.')}`,
    );
    expect(await runtime.dependencies.runs.getDecision(runId, view.turn)).toMatchObject({
      decision: 'approve',
      decidedBy: 'alice',
      choices: [{ decision: 'approve' }, { decision: 'reject' }],
    });
    // The receipt binds each call's choice, the refusal's reason by its hash (issue #25).
    const { verification, entries } = await verifiedReceiptOf(runId);
    expect(verification).toMatchObject({
      kind: 'verified',
      entries: [{ kind: 'decision', decision: 'approve', by: 'alice', refusedCalls: [1] }],
    });
    expect(entries[0]).toMatchObject({
      choices: [
        { index: 0, decision: 'approve' },
        { index: 1, decision: 'reject', reasonHash: hashOf('Page 14 is frozen.') },
      ],
    });
  });

  it('answers a repeat of the same choices as repeated, other choices 409, and bad choices 400 naming the field', async () => {
    // Prepare
    const { runId, view } = await startTwoCalls('pc-writes', 'Repeat');
    const badIndex = await as('alice').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve', calls: [{ index: 7, decision: 'reject' }] },
    });
    const reasonOnApproval = await as('alice').decideRun({
      path: { id: runId },
      body: {
        digest: view.digest,
        decision: 'reject',
        calls: [{ index: 0, decision: 'approve', reason: 'x' }],
      },
    });
    const body = {
      digest: view.digest,
      decision: 'approve' as const,
      calls: [{ index: 0, decision: 'reject' as const, reason: 'not now' }],
    };

    // Act
    const first = await as('alice').decideRun({ path: { id: runId }, body });
    const again = await as('alice').decideRun({
      path: { id: runId },
      body: { ...body, calls: [{ index: 0, decision: 'reject', reason: 'other words' }] },
    });
    const other = await as('ben').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve' },
    });
    await settle(runtime, runId, 'admin', view.turn);

    // Assess
    expect(badIndex.status).toBe(400);
    expect(refusalOf(badIndex).error.field).toBe('body.calls.0.index');
    expect(refusalOf(reasonOnApproval).error).toMatchObject({
      code: 'bad-request',
      field: 'body.calls.0.reason',
    });
    expect(bodyOf(first, 200)).toMatchObject({ repeated: false });
    expect(bodyOf(again, 200)).toMatchObject({ repeated: true });
    expect(other.status).toBe(409);
    expect(await titleOf('14')).toBe('Repeat fourteen');
    expect(await titleOf('12')).not.toBe('Repeat twelve');
  });

  it('lets one of two approvers deciding per call at once win; the other gets 409 and one delivery is made', async () => {
    // Prepare
    const records = { pageWrites: [] as string[], deliveries: [] as string[] };
    recordWritesAndDeliveries(runtime, records);
    const { runId, view } = await startTwoCalls('pc-writes', 'Race');

    // Act
    const [byAlice, byBen] = await Promise.all([
      as('alice').decideRun({
        path: { id: runId },
        body: { digest: view.digest, decision: 'approve', calls: [{ index: 1, decision: 'reject' }] },
      }),
      as('ben').decideRun({
        path: { id: runId },
        body: { digest: view.digest, decision: 'approve', calls: [{ index: 0, decision: 'reject' }] },
      }),
    ]);
    await settle(runtime, runId, 'admin', view.turn);

    // Assess
    expect([byAlice.status, byBen.status].sort()).toEqual([200, 409]);
    const winner = byAlice.status === 200 ? 'Race twelve' : 'Race fourteen';
    expect(records.pageWrites.filter((patch) => patch.includes('Race'))).toEqual([
      JSON.stringify({ title: winner }),
    ]);
    expect(records.deliveries).toEqual(['delivered']);
  });

  it('puts an edit on a fresh card with its diff; the editor may not approve it under four-eyes, someone else may', async () => {
    // Prepare
    const { runId, view } = await startTwoCalls('pc-four-eyes', 'Typo');
    const unknownField = await as('alice').decideRun({
      path: { id: runId },
      body: {
        digest: view.digest,
        decision: 'edit',
        edits: [{ index: 0, arguments: { pageId: '12', colour: 'red' } }],
      },
    });
    const stillOpen = await runtime.dependencies.runs.getCard(runId);

    // Act
    const edited = await as('alice').decideRun({
      path: { id: runId },
      body: {
        digest: view.digest,
        decision: 'edit',
        edits: [{ index: 0, arguments: { pageId: '12', title: 'Typo fixed' } }],
      },
    });
    const fresh = await settle(runtime, runId, 'admin', view.turn);
    const card = await cardOf('ben', runId);
    const byEditor = await as('alice').decideRun({
      path: { id: runId },
      body: { digest: fresh.digest, decision: 'approve' },
    });
    const staleApproval = await as('ben').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve' },
    });
    const byBen = await as('ben').decideRun({
      path: { id: runId },
      body: { digest: fresh.digest, decision: 'approve' },
    });
    const finished = await settle(runtime, runId, 'admin', fresh.turn);

    // Assess
    expect(unknownField.status).toBe(400);
    expect(refusalOf(unknownField).error.field).toMatch(/^body\.edits\.0\.arguments/);
    expect(stillOpen?.state).toBe('open');
    expect(stillOpen?.digest).toBe(view.digest);
    expect(bodyOf(edited, 200)).toMatchObject({ kind: 'decided', decision: 'edit' });
    expect(fresh.status).toBe('waiting');
    expect(fresh.turn).toBe(view.turn + 1);
    expect(fresh.digest).not.toBe(view.digest);
    expect(card.pendingTools[0]).toMatchObject({
      arguments: { pageId: '12', title: 'Typo fixed' },
      editable: true,
      edited: {
        by: 'alice',
        note: TEXTS.editedBy('alice'),
        changes: [{ kind: 'changed', path: ['title'], before: 'Typo twelve', after: 'Typo fixed' }],
        more: 0,
      },
    });
    expect(card.pendingTools[1].edited).toBeUndefined();
    expect((await runtime.dependencies.runs.getCard(runId))?.editedBy).toBe('alice');
    expect(byEditor.status).toBe(403);
    expect(refusalOf(byEditor).error.message).toBe(TEXTS.gateOwnEdit);
    expect(staleApproval.status).toBe(409);
    expect(bodyOf(byBen, 200)).toMatchObject({ decision: 'approve' });
    expect(finished.status).toBe('completed');
    expect(await titleOf('12')).toBe('Typo fixed');
    expect(await titleOf('14')).toBe('Typo fourteen');
    expect(finished.transcript.finalAnswer).toContain(
      TEXTS.callEditedNote('alice', JSON.stringify({ pageId: '12', title: 'Typo fixed' })),
    );
    // The receipt: the edit is signed, binding its editor and both arguments by their hashes
    // (issue #25); then the edited card's approval.
    const { verification, entries } = await verifiedReceiptOf(runId);
    expect(verification).toMatchObject({
      kind: 'verified',
      entries: [
        { kind: 'edit', by: 'alice', editedCalls: [0], signed: true },
        { kind: 'decision', decision: 'approve', by: 'ben' },
      ],
    });
    expect(entries[0]).toMatchObject({
      editedBy: { userId: 'alice', subject: 'alice' },
      edits: [
        {
          index: 0,
          argumentsHash: hashJson({ pageId: '12', title: 'Typo fixed' }),
          originalArgumentsHash: hashJson({ pageId: '12', title: 'Typo twelve' }),
        },
      ],
    });
  });

  it('lets an edit race an approval: exactly one lands, and what runs is what was decided', async () => {
    // Prepare
    const records = { pageWrites: [] as string[], deliveries: [] as string[] };
    recordWritesAndDeliveries(runtime, records);
    const { runId, view } = await startTwoCalls('pc-writes', 'Contest');

    // Act
    const [edit, approval] = await Promise.all([
      as('alice').decideRun({
        path: { id: runId },
        body: {
          digest: view.digest,
          decision: 'edit',
          edits: [{ index: 1, arguments: { pageId: '14', title: 'Contest edited' } }],
        },
      }),
      as('ben').decideRun({ path: { id: runId }, body: { digest: view.digest, decision: 'approve' } }),
    ]);
    const after = await settle(runtime, runId, 'admin', view.turn);

    // Assess
    expect([edit.status, approval.status].sort()).toEqual([200, 409]);
    if (approval.status === 200) {
      expect(after.status).toBe('completed');
      expect(await titleOf('14')).toBe('Contest fourteen');
    } else {
      // The edit won: nothing ran, and the edited proposal waits on a fresh card.
      expect(after.status).toBe('waiting');
      expect(after.turn).toBe(view.turn + 1);
      expect(records.pageWrites.filter((patch) => patch.includes('Contest'))).toEqual([]);
    }
    expect(records.deliveries).toEqual(['delivered']);
  });

  it('counts k-of-n approvals together only when they made the same per-call choices', async () => {
    // Prepare
    const { runId, view } = await startTwoCalls('pc-two', 'Count');
    const onlyTwelve = [{ index: 1, decision: 'reject' as const }];

    // Act
    const byAlice = await as('alice').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve', calls: onlyTwelve },
    });
    const byBenAll = await as('ben').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve' },
    });
    const card = await cardOf('ben', runId);
    const byBenSame = await as('ben').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve', calls: onlyTwelve },
    });
    const byCarl = await as('carl').decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve', calls: onlyTwelve },
    });
    await settle(runtime, runId, 'admin', view.turn);

    // Assess
    expect(bodyOf(byAlice, 202)).toMatchObject({ approvals: { count: 1 } });
    expect(byBenAll.status).toBe(202);
    expect(card.approvals).toMatchObject({ differingApprovers: expect.arrayContaining(['alice']) });
    expect(byBenSame.status).toBe(409);
    expect(refusalOf(byBenSame).error.message).toBe(TEXTS.ownApprovalDiffers);
    expect(bodyOf(byCarl, 200)).toMatchObject({ kind: 'decided', decision: 'approve' });
    expect(await titleOf('12')).toBe('Count twelve');
    expect(await titleOf('14')).not.toBe('Count fourteen');
  });
});
