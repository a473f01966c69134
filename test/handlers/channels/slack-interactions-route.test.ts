import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunTable } from '../../../lambdas/adapters/dynamo/run-table.js';
import { DynamoSlackStore } from '../../../lambdas/adapters/dynamo/slack-message-store.js';
import { SLACK_ACTIONS } from '../../../lambdas/core/channels/slack-message.js';
import { CountersignError } from '../../../lambdas/core/errors.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import {
  createSlackInteractionsHandler,
  SLACK_INTERACTION_MAX_BODY_BYTES,
} from '../../../lambdas/handlers/channels/slack-interactions-route.js';
import type { HttpApiEvent } from '../../../lambdas/handlers/http/http-api-event.js';
import { APPROVER, createHarness, digestShownTo, startPausedRun } from '../../core/runs/use-case-harness.js';
import { type RunningDynalite, startDynalite } from '../../support/dynalite.js';

const SIGNING_SECRET = 'route-test-signing-secret';
const TEAM = 'T0ROUTE';

/** A signed block action as API Gateway hands it over: form body, maybe base64 (an HTTP API encodes form bodies so). */
function interactionEvent(
  payload: unknown,
  options: { base64?: boolean; now?: number; body?: string } = {},
): HttpApiEvent {
  const body = options.body ?? new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const timestamp = String(options.now ?? Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return {
    version: '2.0',
    routeKey: 'POST /integrations/slack/interactions',
    rawPath: '/integrations/slack/interactions',
    rawQueryString: '',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'X-Slack-Request-Timestamp': timestamp,
      'X-Slack-Signature': signature,
    },
    requestContext: { requestId: 'route-test', http: { method: 'POST' } },
    body: options.base64 ? Buffer.from(body, 'utf8').toString('base64') : body,
    isBase64Encoded: options.base64 === true,
  } as unknown as HttpApiEvent;
}

describe('POST /integrations/slack/interactions', () => {
  let dynamo: RunningDynalite;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await dynamo.stop();
  });

  async function routeOf() {
    const harness = createHarness();
    const whispers: string[] = [];
    const store = new DynamoSlackStore(
      new RunTable(dynamo.documentClient, dynamo.tableName, undefined, harness.clock),
    );
    await harness.dependencies.slackUsers.putSlackUser({
      slackUserId: 'U0ALICE',
      slackTeamId: TEAM,
      userId: APPROVER.userId,
    });
    const handler = createSlackInteractionsHandler({
      ...harness.dependencies,
      slack: {
        api: {
          postMessage: async () => ({ ts: '1.1' }),
          updateMessage: async () => {},
          postEphemeral: async ({ text }) => {
            whispers.push(text);
          },
        },
        messages: store,
        routes: [],
        cardUrl: (runId) => `https://inbox/#run-${runId}`,
      },
      slackUsers: harness.dependencies.slackUsers,
      slackReplays: store,
      slackSigningSecret: async () => SIGNING_SECRET,
    });
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    const press = {
      type: 'block_actions',
      team: { id: TEAM },
      user: { id: 'U0ALICE' },
      channel: { id: 'C0ROUTE' },
      actions: [
        {
          action_id: SLACK_ACTIONS.approve,
          value: JSON.stringify({ runId: paused.runId, turn: paused.turn, digest }),
        },
      ],
    };
    // Signed at the harness's time, which the route's window is measured with.
    const signed = (payload: unknown, options: { base64?: boolean; body?: string } = {}) =>
      interactionEvent(payload, { ...options, now: Math.floor(harness.clock.now().getTime() / 1000) });
    return { harness, handler, paused, press, signed, whispers };
  }

  it('verifies the signature over the body’s bytes when API Gateway base64-encodes it, and decides', async () => {
    // Prepare
    const { harness, handler, paused, press, signed } = await routeOf();

    // Act
    const answer = await handler(signed(press, { base64: true }));

    // Assess
    expect(answer.statusCode).toBe(200);
    expect(await harness.runs.getDecision(paused.runId, paused.turn)).toMatchObject({
      decision: 'approve',
      decidedBy: APPROVER.userId,
      channel: 'slack',
    });
  });

  it('refuses a body past its bound with a 413, before reading the signature', async () => {
    // Prepare
    const { handler, signed } = await routeOf();

    // Act
    const answer = await handler(signed({}, { body: 'x'.repeat(SLACK_INTERACTION_MAX_BODY_BYTES + 1) }));

    // Assess
    expect(answer.statusCode).toBe(413);
  });

  it('answers a link button’s click (nothing to decide) with Slack’s empty 200', async () => {
    // Prepare
    const { harness, handler, paused, press, signed } = await routeOf();

    // Act
    const answer = await handler(signed({ ...press, actions: [{ action_id: SLACK_ACTIONS.open }] }));

    // Assess
    expect(answer).toMatchObject({ statusCode: 200, body: '' });
    expect(await harness.runs.getDecision(paused.runId, paused.turn)).toBeUndefined();
  });

  it('refuses a press whose button value was altered, deciding nothing', async () => {
    // Prepare
    const { harness, handler, paused, press, signed } = await routeOf();

    // Act
    const answer = await handler(
      signed({ ...press, actions: [{ action_id: SLACK_ACTIONS.approve, value: '{"runId":1}' }] }),
    );

    // Assess
    expect(answer.statusCode).toBe(200);
    expect(await harness.runs.getDecision(paused.runId, paused.turn)).toBeUndefined();
    expect(harness.metrics.counts.get('SlackInteractionRefusals')).toBe(1);
  });

  it('tells the presser alone that a busy service held up a decision on record, as the API’s 503 does', async () => {
    // Prepare: Step Functions is busy past the SDK's retries when the claimed decision is delivered
    const { harness, handler, paused, press, signed, whispers } = await routeOf();
    harness.executions.failNext = {
      call: 'resume',
      error: new CountersignError('unavailable', TEXTS.serviceUnavailable),
    };

    // Act: another request than the first test's (the harness pauses the same run at the same time)
    const answer = await handler(signed({ ...press, trigger_id: 'busy-service' }));

    // Assess: Slack gets its 200; the claim stands for the probe to deliver, and the presser is told
    expect(answer.statusCode).toBe(200);
    expect(await harness.runs.getDecision(paused.runId, paused.turn)).toMatchObject({ channel: 'slack' });
    expect(whispers).toEqual([TEXTS.decisionUnavailable('yes')]);
  });
});
