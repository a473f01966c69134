import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CountersignError } from '../../lambdas/core/errors.js';
import { verifyWebhookSignature } from '../../lambdas/core/external-runs/webhook-signature.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import { eventually, type ResponseJson, useTestRuntime } from '../support/local-runtime.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { decide } from './approvers-support.js';
import { demoMachineClient, demoTurn, inboxCardOf, machineClientOf } from './external-runs-support.js';

describe('external runs: one run per client key, one decision per turn, one answer', () => {
  const runtime = useTestRuntime();
  let receiver: WebhookReceiver;
  let restore: Array<() => void> = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });

  afterEach(() => {
    for (const undo of restore.reverse()) undo();
    restore = [];
  });

  afterAll(async () => {
    await receiver.stop();
  });

  const pausesOf = (runId: string) => runtime.notifications.filter((event) => event.runId === runId).length;

  it('answers a retry with the same key with the same run, and another turn under that key with 409', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const turn = demoTurn();

    // Act
    const first = bodyOf(await agent.submitExternalRun({ body: turn }), 202);
    const retry = bodyOf(await agent.submitExternalRun({ body: turn }), 202);
    const other = await agent.submitExternalRun({ body: { ...turn, summary: 'Something else entirely.' } });
    await inboxCardOf(runtime, first.runId);

    // Assess
    expect(retry).toEqual({ runId: first.runId, status: 'pending', repeated: true });
    expect(refusalOf(other).error).toEqual({
      code: 'conflict',
      message: TEXTS.clientKeyReused,
      field: 'body.clientKey',
    });
    expect(pausesOf(first.runId)).toBe(1);
  });

  it('starts one run for twenty concurrent submissions of one turn', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const turn = demoTurn();

    // Act
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => agent.submitExternalRun({ body: turn })),
    );
    const bodies = answers.map((answer) => bodyOf(answer, 202));
    const [runId] = new Set(bodies.map((body) => body.runId));
    await inboxCardOf(runtime, runId ?? '');

    // Assess
    expect(new Set(bodies.map((body) => body.runId)).size).toBe(1);
    expect(bodies.filter((body) => !body.repeated)).toHaveLength(1);
    expect(pausesOf(runId ?? '')).toBe(1);
  });

  it('finishes on a retry what a first attempt left half done (its key claimed, its run never created)', async () => {
    // Prepare: the first attempt dies right after it claimed the key. The runs repository is a
    // metering proxy over the DynamoDB one: an own property shadows its method until deleted.
    const agent = machineClientOf(runtime);
    const turn = demoTurn();
    const runs = runtime.dependencies.runs;
    const restoreCreateRun = () => Reflect.deleteProperty(runs, 'createRun');
    runs.createRun = async () => {
      throw new CountersignError('internal', 'The table went away.');
    };
    restore.push(restoreCreateRun);
    const failed = await agent.submitExternalRun({ body: turn });
    restoreCreateRun();

    // Act
    const retry = bodyOf(await agent.submitExternalRun({ body: turn }), 202);
    const card = await inboxCardOf(runtime, retry.runId);

    // Assess
    expect(failed.status).toBe(500);
    expect(retry.repeated).toBe(true);
    expect(card.pendingTools).toHaveLength(3);
  });

  it('takes one of an approval and a rejection sent together, and answers the one that won to every poll and the webhook', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const { runId } = bodyOf(
      await agent.submitExternalRun({ body: demoTurn({ webhookUrl: receiver.url }) }),
      202,
    );
    const card = await inboxCardOf(runtime, runId);
    const polls = Array.from({ length: 4 }, () =>
      agent.getExternalRun({ path: { id: runId }, query: { wait: 20 } }),
    );

    // Act
    const [approval, rejection] = await Promise.all([
      decide(runtime, runId, { digest: card.digest, decision: 'approve' }),
      decide(runtime, runId, { digest: card.digest, decision: 'reject', reason: 'no' }, 'reviewer'),
    ]);
    const answers = (await Promise.all(polls)).map((poll) => bodyOf(poll));
    await eventually(async () => receiver.received.find((hook) => hook.body.includes(runId)));
    await new Promise((resolve) => setTimeout(resolve, 500));

    // Assess
    expect([approval.status, rejection.status].sort()).toEqual([200, 409]);
    const won = approval.status === 200 ? 'approved' : 'rejected';
    for (const answer of answers) {
      expect(answer.status).toBe('decided');
      expect(new Set(answer.calls?.map((call) => call.decision))).toEqual(new Set([won]));
    }
    const deliveries = receiver.received.filter((hook) => hook.headers['countersign-delivery'] === runId);
    expect(deliveries).toHaveLength(1);
    expect(JSON.parse(deliveries[0]?.body ?? '{}').run).toEqual(answers[0]);
  });

  it('answers cancelled to the caller when an admin cancels the run while it waits', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const { runId } = bodyOf(await agent.submitExternalRun({ body: demoTurn() }), 202);
    const card = await inboxCardOf(runtime, runId);

    // Act
    const cancelled = await runtime
      .client('admin')
      .cancelRun({ path: { id: runId }, body: { reason: 'the agent was retired' } });
    const late = await decide(runtime, runId, { digest: card.digest, decision: 'approve' });
    const answer = bodyOf(await agent.getExternalRun({ path: { id: runId }, query: { wait: 5 } }));

    // Assess
    expect(cancelled.status).toBe(200);
    expect(late.status).toBe(409);
    expect(answer).toMatchObject({ runId, status: 'cancelled', reason: TEXTS.runCancelled });
    expect(answer.calls).toBeUndefined();
  });

  it('posts the webhook again after a 503, signed anew, and gives up at once on a 410', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    receiver.answerWith([503]);
    const retried = bodyOf(
      await agent.submitExternalRun({ body: demoTurn({ webhookUrl: receiver.url }) }),
      202,
    );
    await decide(runtime, retried.runId, {
      digest: (await inboxCardOf(runtime, retried.runId)).digest,
      decision: 'approve',
    });
    const deliveries = await eventually(async () => {
      const found = receiver.received.filter(
        (hook) => hook.headers['countersign-delivery'] === retried.runId,
      );
      return found.length >= 2 ? found : undefined;
    }, 30_000);
    receiver.answerWith([410]);
    const refused = bodyOf(
      await agent.submitExternalRun({ body: demoTurn({ webhookUrl: receiver.url }) }),
      202,
    );

    // Act
    await decide(runtime, refused.runId, {
      digest: (await inboxCardOf(runtime, refused.runId)).digest,
      decision: 'approve',
    });
    await eventually(async () =>
      runtime.logLines.find((line) => line.includes('webhook given up') && line.includes(refused.runId)),
    );
    await new Promise((resolve) => setTimeout(resolve, 6_000));

    // Assess
    const secret = demoMachineClient(runtime).webhookSecret;
    for (const delivery of deliveries) {
      const header = delivery.headers['countersign-signature'];
      expect(verifyWebhookSignature({ secret, body: delivery.body, header }).kind).toBe('verified');
    }
    const refusedDeliveries = receiver.received.filter(
      (hook) => hook.headers['countersign-delivery'] === refused.runId,
    );
    expect(refusedDeliveries).toHaveLength(1);
    const answer: ResponseJson = bodyOf(await agent.getExternalRun({ path: { id: refused.runId } }));
    expect(answer.status).toBe('decided');
  }, 60_000);
});
