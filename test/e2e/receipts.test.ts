import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_RECEIPT_PUBLIC_KEY_FILE } from '../../lambdas/adapters/local-receipt-signer.js';
import { verifyReceipt } from '../../lambdas/core/receipts/verify-receipt.js';
import { bodyOf } from '../support/api-answers.js';
import { settle, useTestRuntime } from '../support/local-runtime.js';

/** GET /runs/{id}/receipt on `npm start`: what the decision, cancel and expiry paths recorded. */
describe('run receipts', () => {
  const runtime = useTestRuntime();
  let publicKey: ReturnType<typeof createPublicKey>;

  beforeAll(async () => {
    const keyPath = join(runtime.baseDirectory, '.countersign', 'keys', LOCAL_RECEIPT_PUBLIC_KEY_FILE);
    publicKey = createPublicKey(await readFile(keyPath, 'utf8'));
  });

  async function waitingRun(configurationId: string, input: string) {
    const started = await runtime.client('editor').startRun({ body: { configurationId, input } });
    const runId = bodyOf(started).runId as string;
    const view = await settle(runtime, runId, 'admin');
    expect(view.status).toBe('waiting');
    return { runId, digest: view.digest as string, turn: view.turn as number };
  }

  it('records both k-of-n approvals and the decision, signed with the local key, verifiable offline', async () => {
    // Prepare
    const { runId, digest, turn } = await waitingRun(
      'demo-two-approvers',
      "Set the keywords of page 12 to 'receipts'",
    );
    for (const approver of ['approver', 'reviewer']) {
      const answer = await runtime
        .client(approver)
        .decideRun({ path: { id: runId }, body: { digest, decision: 'approve' } });
      expect([200, 202]).toContain(answer.status);
    }
    await settle(runtime, runId, 'admin', turn);

    // Act
    const asOwner = await runtime.client('editor').getRunReceipt({ path: { id: runId } });
    const asApprover = await runtime.client('reviewer').getRunReceipt({ path: { id: runId } });

    // Assess
    expect(asOwner.status).toBe(200);
    expect(bodyOf(asApprover)).toEqual(bodyOf(asOwner));
    const verification = verifyReceipt(bodyOf(asOwner), { publicKey }, { runId });
    expect(verification).toMatchObject({
      kind: 'verified',
      unsignedTail: 0,
      entries: [
        { kind: 'approval', by: 'approver', signed: true },
        { kind: 'approval', by: 'reviewer', signed: true },
        { kind: 'decision', decision: 'approve', by: 'reviewer', approvers: ['approver', 'reviewer'] },
      ],
    });
  });

  it('records a cancel, chained and unsigned, after a single approval', async () => {
    // Prepare
    const { runId, digest } = await waitingRun(
      'demo-two-approvers',
      "Set the keywords of page 14 to 'cancelled'",
    );
    await runtime
      .client('approver')
      .decideRun({ path: { id: runId }, body: { digest, decision: 'approve' } });
    await runtime.client('editor').cancelRun({ path: { id: runId }, body: { reason: 'not today' } });

    // Act
    const receipt = bodyOf(await runtime.client('admin').getRunReceipt({ path: { id: runId } }));

    // Assess
    expect(verifyReceipt(receipt, { publicKey }, { runId })).toMatchObject({
      kind: 'verified',
      unsignedTail: 1,
      entries: [{ kind: 'approval' }, { kind: 'cancel', by: 'editor', signed: false }],
    });
  });

  it('answers the 404 of an unknown run to an approver the card was not routed to, and to an unknown run', async () => {
    // Prepare: cards of `finance-writes` go to the finance group, which the approver is in
    const approver = await runtime.dependencies.users.getUser('approver');
    await runtime.dependencies.users.putUser({
      ...(approver as NonNullable<typeof approver>),
      groups: ['finance'],
    });
    const put = await runtime.client('admin').putConfiguration({
      path: { id: 'finance-writes' },
      body: {
        configurationId: 'finance-writes',
        label: 'Finance writes',
        provider: 'scripted',
        model: 'scripted-v1',
        allowedTools: ['get_page', 'update_page_metadata'],
        approverGroups: ['finance'],
      },
    });
    expect(put.status).toBe(200);
    const routed = await waitingRun('finance-writes', "Set the title of page 12 to 'finance only'");

    // Act
    const member = await runtime.client('approver').getRunReceipt({ path: { id: routed.runId } });
    const stranger = await runtime.sendRaw('GET', `/runs/${routed.runId}/receipt`, { as: 'reviewer' });
    const unknown = await runtime.sendRaw('GET', '/runs/no-such-run/receipt', { as: 'admin' });

    // Assess: nothing was decided yet, so the chain is empty
    expect(bodyOf(member)).toEqual({
      format: 'countersign-receipt',
      formatVersion: 1,
      runId: routed.runId,
      entries: [],
    });
    expect(stranger.status).toBe(404);
    expect(unknown.status).toBe(404);
  });
});
