import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf } from '../support/api-answers.js';
import { eventually, removeTestData, type TestRuntime } from '../support/local-runtime.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { decide, definitionWithApprovalTimeout, startRuntimeWithDefinition } from './approvers-support.js';
import { demoTurn, inboxCardOf, machineClientOf } from './external-runs-support.js';

// The deployed ASL with AwaitApproval's wait shortened: the state machine times the wait out and
// MarkExpired ends the run, as on AWS; an external run then records and posts its answer.
const APPROVAL_TIMEOUT_SECONDS = 4;

describe('an external run nobody decides in time', () => {
  let runtime: TestRuntime;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    runtime = await startRuntimeWithDefinition({
      definition: definitionWithApprovalTimeout(APPROVAL_TIMEOUT_SECONDS),
      approvalTimeoutSeconds: APPROVAL_TIMEOUT_SECONDS,
    });
  });

  afterAll(async () => {
    await runtime.stop();
    await receiver.stop();
    await removeTestData(runtime);
  });

  it('answers expired to the long poll, the webhook and the event, and a late decision 410', async () => {
    // Prepare
    const agent = machineClientOf(runtime);
    const { runId } = bodyOf(
      await agent.submitExternalRun({ body: demoTurn({ webhookUrl: receiver.url }) }),
      202,
    );
    const card = await inboxCardOf(runtime, runId);

    // Act
    const answer = await eventually(async () => {
      const polled = bodyOf(await agent.getExternalRun({ path: { id: runId }, query: { wait: 5 } }));
      return polled.status === 'pending' ? undefined : polled;
    }, 20_000);
    const delivery = await eventually(async () =>
      receiver.received.find((hook) => hook.body.includes(runId)),
    );
    const late = await decide(runtime, runId, { digest: card.digest, decision: 'approve' });

    // Assess
    expect(answer).toMatchObject({
      runId,
      status: 'expired',
      reason: TEXTS.expired(APPROVAL_TIMEOUT_SECONDS),
    });
    expect(answer.calls).toBeUndefined();
    expect(JSON.parse(delivery.body)).toEqual({ type: 'external_run.answered', run: answer });
    const event = await eventually(async () =>
      runtime.externalNotifications.find((each) => each.runId === runId),
    );
    expect(event).toMatchObject({ status: 'expired', calls: [{ index: 0 }, { index: 1 }, { index: 2 }] });
    expect(event.calls.every((call) => call.decision === undefined)).toBe(true);
    expect(late.status).toBe(410);
  });
});
