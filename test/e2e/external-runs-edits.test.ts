import { describe, expect, it } from 'vitest';
import { hashJson } from '../../lambdas/core/receipts/entry-hashes.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { DEMO_EXTERNAL_CONFIGURATION_ID } from '../../lambdas/local/demo-data.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import { eventually, type ResponseJson, useTestRuntime } from '../support/local-runtime.js';
import { decide } from './approvers-support.js';
import {
  demoTurn,
  type ExternalTurn,
  inboxCardOf,
  machineClientOf,
  submitToCard,
  useWebhookReceiver,
} from './external-runs-support.js';

/** The demo turn with `send_invoice` declared editable (call 1); `notify_sales` (call 2) is not. */
const editableTurn = (overrides: Partial<ExternalTurn> = {}): ExternalTurn =>
  demoTurn({
    tools: [
      { name: 'lookup_customer', effect: 'read' },
      { name: 'send_invoice', effect: 'write', editable: true },
      { name: 'notify_sales', effect: 'unknown' },
    ],
    ...overrides,
  });

const correctedInvoice = { customer: 'ACME', amountCents: 90_000, currency: 'EUR' };

describe('external runs: an approver edits a call, someone approves the edit, the caller runs it', () => {
  const runtime = useTestRuntime();
  const webhooks = useWebhookReceiver();

  /** Submits `turn` under the demo configuration with its policy under four-eyes (restored after). */
  const submitUnderFourEyes = async (turn: ExternalTurn) => {
    const configurations = runtime.dependencies.configurations;
    const configuration = await configurations.getConfiguration(DEMO_EXTERNAL_CONFIGURATION_ID);
    if (!configuration) throw new Error('demo data is missing');
    await configurations.putConfiguration({
      ...configuration,
      options: { ...configuration.options, fourEyes: true },
    });
    try {
      return await submitToCard(runtime, turn);
    } finally {
      await configurations.putConfiguration(configuration);
    }
  };

  /** The answer as GET, the webhook and the `External Run Answered` event give it. */
  const answersOf = async (runId: string) => {
    const agent = machineClientOf(runtime);
    const polled = bodyOf(await agent.getExternalRun({ path: { id: runId }, query: { wait: 20 } }));
    const hook = await eventually(async () =>
      webhooks.current.received.find((each) => each.headers['countersign-delivery'] === runId),
    );
    const event = await eventually(async () =>
      runtime.externalNotifications.find((each) => each.runId === runId),
    );
    return { polled, hooked: JSON.parse(hook.body).run, event };
  };

  it('puts the edit on a fresh card that its editor may not approve under four-eyes, and answers the edited arguments once another approves', async () => {
    // Prepare
    const { runId, card: first } = await submitUnderFourEyes(
      editableTurn({ webhookUrl: webhooks.current.url }),
    );

    // Act
    const edited = await decide(runtime, runId, {
      digest: first.digest,
      decision: 'edit',
      edits: [{ index: 1, arguments: correctedInvoice }],
    });
    const fresh = await eventually(async () => {
      const card = await inboxCardOf(runtime, runId);
      return card.digest === first.digest ? undefined : card;
    });
    const stale = await decide(runtime, runId, { digest: first.digest, decision: 'approve' });
    const byEditor = await decide(runtime, runId, { digest: fresh.digest, decision: 'approve' });
    const byReviewer = await decide(
      runtime,
      runId,
      { digest: fresh.digest, decision: 'approve' },
      'reviewer',
    );
    const { polled, hooked, event } = await answersOf(runId);

    // Assess: the card is the editor's proposal, without the caller's lines for the edited call
    expect(bodyOf(edited, 200)).toMatchObject({ decision: 'edit' });
    expect(first.pendingTools.map((tool: ResponseJson) => tool.editable)).toEqual([false, true, false]);
    const editedTool = fresh.pendingTools[1];
    expect(editedTool.arguments).toEqual(correctedInvoice);
    expect(editedTool.edited).toMatchObject({
      by: 'approver',
      note: TEXTS.editedBy('approver'),
      changes: [{ path: ['amountCents'], kind: 'changed' }],
    });
    expect(editedTool.preview).toEqual({ status: 'none', message: TEXTS.callerPreviewOfOriginal });
    expect(fresh.pendingTools[2].preview.status).toBe('none');
    expect(stale.status).toBe(409);
    expect(byEditor.status).toBe(403);
    expect(refusalOf(byEditor).error.message).toBe(TEXTS.gateOwnEdit);
    expect(bodyOf(byReviewer, 200)).toMatchObject({ decision: 'approve' });
    // The answer: the approved edited call carries the arguments to run and its editor, the others neither
    expect(polled.status).toBe('decided');
    expect(polled.calls).toEqual([
      { index: 0, callId: 'call-0', tool: 'lookup_customer', decision: 'approved' },
      {
        index: 1,
        callId: 'call_invoice',
        tool: 'send_invoice',
        decision: 'approved',
        arguments: correctedInvoice,
        edited: { by: 'approver' },
      },
      { index: 2, callId: 'call-2', tool: 'notify_sales', decision: 'approved' },
    ]);
    expect(hooked).toEqual(polled);
    expect(event.calls).toEqual([
      { index: 0, tool: 'lookup_customer', decision: 'approved' },
      { index: 1, tool: 'send_invoice', decision: 'approved', edited: { by: 'approver' } },
      { index: 2, tool: 'notify_sales', decision: 'approved' },
    ]);
    // The receipt signs the edit as it signs ours (issue #25): the editor and both arguments' hashes
    const receipt = bodyOf(await runtime.client('admin').getRunReceipt({ path: { id: runId } }));
    expect(receipt.entries).toMatchObject([
      {
        kind: 'edit',
        editedBy: { userId: 'approver', subject: 'approver' },
        edits: [{ index: 1, argumentsHash: hashJson(correctedInvoice) }],
        signature: expect.any(String),
      },
      { kind: 'decision', decision: 'approve', decidedBy: { userId: 'reviewer' } },
    ]);
  });

  it('refuses an edit of a tool its caller did not declare editable, and one that is not a JSON object, naming the field', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const { runId, card } = await submitToCard(runtime, editableTurn());
    const edit = (index: number, value: unknown) =>
      decide(runtime, runId, {
        digest: card.digest,
        decision: 'edit',
        edits: [{ index, arguments: value }],
      });

    // Act
    const notEditable = await edit(2, { channel: '#sales', text: 'ACME invoiced at last' });
    const notAnObject = await edit(1, ['ACME', 90_000]);
    const schema = await agent.send({
      method: 'POST',
      path: '/external-runs',
      body: editableTurn({
        tools: [{ name: 'send_invoice', effect: 'write', editable: true, argumentsSchema: {} } as never],
        calls: [{ tool: 'send_invoice', arguments: correctedInvoice }],
      }),
    });
    const approved = await decide(runtime, runId, { digest: card.digest, decision: 'approve' });

    // Assess: nothing of a refused edit was recorded; the card stays as it was
    expect(refusalOf(notEditable).error).toEqual({
      code: 'bad-request',
      message: TEXTS.externalCallNotEditable('notify_sales'),
      field: 'body.edits.0.index',
    });
    expect(notAnObject.status).toBe(400);
    expect(refusalOf(notAnObject).error.field).toBe('body.edits.0.arguments');
    expect(schema.status).toBe(400);
    expect(JSON.stringify(schema.body)).toContain('argumentsSchema');
    expect(bodyOf(approved, 200)).toMatchObject({ decision: 'approve', repeated: false });
    const answer = bodyOf(await agent.getExternalRun({ path: { id: runId }, query: { wait: 20 } }));
    expect(answer.calls?.map((call) => [call.decision, call.arguments, call.edited])).toEqual([
      ['approved', undefined, undefined],
      ['approved', undefined, undefined],
      ['approved', undefined, undefined],
    ]);
  });

  it('takes one of an edit and an approval sent together, and gives one answer everywhere', async () => {
    // Prepare
    const { runId, card } = await submitToCard(runtime, editableTurn({ webhookUrl: webhooks.current.url }));

    // Act
    const [edit, approval] = await Promise.all([
      decide(runtime, runId, {
        digest: card.digest,
        decision: 'edit',
        edits: [{ index: 1, arguments: correctedInvoice }],
      }),
      decide(runtime, runId, { digest: card.digest, decision: 'approve' }, 'reviewer'),
    ]);
    const editWon = edit.status === 200;
    if (editWon) {
      // The edit waits on a fresh card: without four-eyes its approval may come from anyone.
      const fresh = await eventually(async () => {
        const next = await inboxCardOf(runtime, runId);
        return next.digest === card.digest ? undefined : next;
      });
      bodyOf(await decide(runtime, runId, { digest: fresh.digest, decision: 'approve' }, 'reviewer'), 200);
    }
    const { polled, hooked, event } = await answersOf(runId);
    await new Promise((resolve) => setTimeout(resolve, 500));

    // Assess
    expect([edit.status, approval.status].sort()).toEqual([200, 409]);
    const invoice = polled.calls?.[1];
    if (editWon) {
      expect(invoice).toMatchObject({ arguments: correctedInvoice, edited: { by: 'approver' } });
    } else {
      expect(invoice).not.toHaveProperty('arguments');
      expect(invoice).not.toHaveProperty('edited');
    }
    expect(hooked).toEqual(polled);
    expect(event.calls[1]).toEqual({
      index: 1,
      tool: 'send_invoice',
      decision: 'approved',
      ...(editWon ? { edited: { by: 'approver' } } : {}),
    });
    const deliveries = webhooks.current.received.filter(
      (hook) => hook.headers['countersign-delivery'] === runId,
    );
    expect(deliveries).toHaveLength(1);
  });
});
