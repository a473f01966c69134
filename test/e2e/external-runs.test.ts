import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { externalRunWebhookSchema } from '../../lambdas/contract/external-schemas.js';
import { verifyWebhookSignature } from '../../lambdas/core/external-runs/webhook-signature.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import { eventually, type ResponseJson, useTestRuntime } from '../support/local-runtime.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { decide } from './approvers-support.js';
import { demoMachineClient, demoTurn, inboxCardOf, machineClientOf } from './external-runs-support.js';

describe('the approval API of agents that run elsewhere', () => {
  const runtime = useTestRuntime();
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });

  afterAll(async () => {
    await receiver.stop();
  });

  it('puts a submitted turn on the same card as any run: its calls, the caller’s flagged preview, the unknown effect as a write', async () => {
    // Prepare
    const agent = machineClientOf(runtime);

    // Act
    const submitted = await agent.submitExternalRun({ body: demoTurn() });
    const { runId } = bodyOf(submitted, 202);
    const card = await inboxCardOf(runtime, runId);

    // Assess
    expect(bodyOf(submitted)).toEqual({ runId, status: 'pending', repeated: false });
    expect(card).toMatchObject({ owner: 'demo-agent', label: 'Agent that runs elsewhere (demo)', turn: 0 });
    const [lookup, invoice, notify] = card.pendingTools;
    expect(lookup).toMatchObject({
      tool: 'demo-external/lookup_customer',
      requiresApproval: false,
      willRun: true,
    });
    expect(invoice).toMatchObject({
      tool: 'demo-external/send_invoice',
      requiresApproval: true,
      willRun: true,
      arguments: { customer: 'ACME', amountCents: 120_000, currency: 'EUR' },
      preview: {
        status: 'shown',
        suppliedBy: 'caller',
        caveat: TEXTS.callerPreviewCaveat,
        // Each caller line is one quoted value: it cannot pass for a line of ours.
        lines: ['"Invoice INV-7 to ACME: 1,200.00 EUR"', '"Replaces: no invoice for March yet"'],
      },
    });
    expect(notify).toMatchObject({
      tool: 'demo-external/notify_sales',
      requiresApproval: true,
      effectUnconfirmed: TEXTS.effectUnconfirmed,
      preview: { status: 'none', message: TEXTS.previewFailed },
    });
    expect(runtime.notifications.some((event) => event.runId === runId)).toBe(true);
  });

  it('answers a long poll with every call approved once an approver approves, and signs the webhook with the client’s secret', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const { runId } = bodyOf(
      await agent.submitExternalRun({ body: demoTurn({ webhookUrl: receiver.url }) }),
      202,
    );
    const card = await inboxCardOf(runtime, runId);
    const polled = agent.getExternalRun({ path: { id: runId }, query: { wait: 20 } });

    // Act
    const decision = await decide(runtime, runId, { digest: card.digest, decision: 'approve' });
    const answer = bodyOf(await polled);
    const delivery = await eventually(async () =>
      receiver.received.find((hook) => hook.body.includes(runId)),
    );

    // Assess: the long poll returned with the decision, not at its 20 s end
    expect(decision.status).toBe(200);
    expect(answer).toMatchObject({ runId, status: 'decided', configurationId: 'demo-external', reports: [] });
    expect(answer.calls).toEqual([
      { index: 0, callId: 'call-0', tool: 'lookup_customer', decision: 'approved' },
      { index: 1, callId: 'call_invoice', tool: 'send_invoice', decision: 'approved' },
      { index: 2, callId: 'call-2', tool: 'notify_sales', decision: 'approved' },
    ]);
    const verdict = verifyWebhookSignature({
      secret: demoMachineClient(runtime).webhookSecret,
      body: delivery.body,
      header: delivery.headers['countersign-signature'],
    });
    expect(verdict.kind).toBe('verified');
    expect(delivery.headers['countersign-delivery']).toBe(runId);
    expect(externalRunWebhookSchema.parse(JSON.parse(delivery.body))).toEqual({
      type: 'external_run.answered',
      run: answer,
    });
    // Another secret, a changed byte, or a replay after the tolerance is refused.
    for (const refused of [
      { secret: 'whsec_other', body: delivery.body },
      {
        secret: demoMachineClient(runtime).webhookSecret,
        body: delivery.body.replace('approved', 'rejected'),
      },
    ]) {
      expect(
        verifyWebhookSignature({ ...refused, header: delivery.headers['countersign-signature'] }).kind,
      ).toBe('refused');
    }
    expect(
      verifyWebhookSignature({
        secret: demoMachineClient(runtime).webhookSecret,
        body: delivery.body,
        header: delivery.headers['countersign-signature'],
        now: new Date(Date.now() + 10 * 60_000),
      }),
    ).toEqual({ kind: 'refused', reason: 'stale' });
    expect(runtime.externalNotifications.find((event) => event.runId === runId)).toEqual({
      runId,
      owner: 'demo-agent',
      configurationId: 'demo-external',
      status: 'decided',
      calls: [
        { index: 0, tool: 'lookup_customer', decision: 'approved' },
        { index: 1, tool: 'send_invoice', decision: 'approved' },
        { index: 2, tool: 'notify_sales', decision: 'approved' },
      ],
    });
  });

  it('answers every call rejected with the approver’s reason, which this configuration reveals', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const { runId } = bodyOf(await agent.submitExternalRun({ body: demoTurn() }), 202);
    const card = await inboxCardOf(runtime, runId);

    // Act
    await decide(runtime, runId, {
      digest: card.digest,
      decision: 'reject',
      reason: 'March is not billable',
    });
    const answer = bodyOf(await agent.getExternalRun({ path: { id: runId }, query: { wait: 20 } }));

    // Assess
    expect(answer.status).toBe('decided');
    expect(answer.calls?.map((call) => [call.decision, call.reason])).toEqual([
      ['rejected', 'March is not billable'],
      ['rejected', 'March is not billable'],
      ['rejected', 'March is not billable'],
    ]);
  });

  it('keeps what the caller reports it ran, flags a call it ran without approval, and refuses a report before the answer', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const { runId } = bodyOf(await agent.submitExternalRun({ body: demoTurn() }), 202);
    const early = await agent.reportExternalExecution({
      path: { id: runId },
      body: { reports: [{ index: 1, outcome: 'succeeded' }] },
    });
    const card = await inboxCardOf(runtime, runId);
    await decide(runtime, runId, { digest: card.digest, decision: 'reject' });
    await agent.getExternalRun({ path: { id: runId }, query: { wait: 20 } });

    // Act
    const reported = await agent.reportExternalExecution({
      path: { id: runId },
      body: {
        reports: [
          { index: 0, outcome: 'skipped' },
          { index: 1, outcome: 'succeeded', detail: 'sent anyway: INV-7' },
        ],
      },
    });
    const repeated = await agent.reportExternalExecution({
      path: { id: runId },
      body: { reports: [{ index: 1, outcome: 'succeeded', detail: 'sent anyway: INV-7' }] },
    });
    const changed = await agent.reportExternalExecution({
      path: { id: runId },
      body: { reports: [{ index: 1, outcome: 'failed' }] },
    });
    const past = await agent.reportExternalExecution({
      path: { id: runId },
      body: { reports: [{ index: 3, outcome: 'failed' }] },
    });

    // Assess
    expect(early.status).toBe(409);
    expect((early.body as ResponseJson).error.message).toBe(TEXTS.externalRunNotAnswered);
    expect(bodyOf(reported).reports).toEqual([
      { index: 0, outcome: 'skipped', approved: false, reportedAt: expect.any(String) },
      {
        index: 1,
        outcome: 'succeeded',
        approved: false,
        reportedAt: expect.any(String),
        detail: 'sent anyway: INV-7',
      },
    ]);
    expect(bodyOf(repeated).reports).toHaveLength(2);
    expect(changed.status).toBe(409);
    expect(past.status).toBe(400);
    expect((past.body as ResponseJson).error.field).toBe('body.reports.0.index');
    expect(
      runtime.logLines.some(
        (line) => line.includes('external call reported run without approval') && line.includes(runId),
      ),
    ).toBe(true);
  });

  it('answers per call when an approver refuses one call and approves the others, and refuses an edit of a tool its agent did not declare editable', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const { runId } = bodyOf(await agent.submitExternalRun({ body: demoTurn() }), 202);
    const card = await inboxCardOf(runtime, runId);

    // Act
    const edit = await decide(runtime, runId, {
      digest: card.digest,
      decision: 'edit',
      edits: [{ index: 1, arguments: { customer: 'ACME', amountCents: 100_000, currency: 'EUR' } }],
    });
    const decided = await decide(runtime, runId, {
      digest: card.digest,
      decision: 'approve',
      calls: [{ index: 1, decision: 'reject', reason: 'Wrong amount' }],
    });
    const answer = bodyOf(await agent.getExternalRun({ path: { id: runId }, query: { wait: 20 } }));
    const reported = await agent.reportExternalExecution({
      path: { id: runId },
      body: {
        reports: [
          { index: 0, outcome: 'succeeded' },
          { index: 1, outcome: 'skipped' },
        ],
      },
    });

    // Assess: the refused edit changed nothing; the per-call decision is each call's answer
    expect(edit.status).toBe(400);
    expect(refusalOf(edit).error).toMatchObject({
      field: 'body.edits.0.index',
      message: TEXTS.externalCallNotEditable('send_invoice'),
    });
    expect(decided.status).toBe(200);
    expect(answer.calls?.map((call) => [call.index, call.decision, call.reason])).toEqual([
      [0, 'approved', undefined],
      [1, 'rejected', 'Wrong amount'],
      [2, 'approved', undefined],
    ]);
    expect(bodyOf(reported).reports.map((report) => [report.index, report.approved])).toEqual([
      [0, true],
      [1, false],
    ]);
    const announced = await eventually(async () =>
      runtime.externalNotifications.find((event) => event.runId === runId),
    );
    expect(announced.calls.map((call) => call.decision)).toEqual(['approved', 'rejected', 'approved']);
  });
});
