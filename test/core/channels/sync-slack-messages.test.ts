import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable } from '../../../lambdas/adapters/dynamo/create-table.js';
import { RunTable } from '../../../lambdas/adapters/dynamo/run-table.js';
import { DynamoSlackStore } from '../../../lambdas/adapters/dynamo/slack-message-store.js';
import type { SlackBlock } from '../../../lambdas/core/channels/slack-message.js';
import type { SlackApi } from '../../../lambdas/core/channels/slack-ports.js';
import type { SlackRoute } from '../../../lambdas/core/channels/slack-routes.js';
import {
  SLACK_POSTING_STALE_MILLISECONDS,
  type SlackDependencies,
  syncSlackMessages,
} from '../../../lambdas/core/channels/sync-slack-messages.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { markRunExpired } from '../../../lambdas/core/runs/end-run.js';
import { escalateCardOnTimer } from '../../../lambdas/core/runs/escalate-card.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { createSlackNotifyHandler } from '../../../lambdas/handlers/channels/channel-event-handlers.js';
import { type RunningDynalite, startDynalite } from '../../support/dynalite.js';
import {
  APPROVER,
  createHarness,
  digestShownTo,
  person,
  startPausedRun,
  type UseCaseHarness,
} from '../runs/use-case-harness.js';

/** Slack's API as the channel calls it, recording each call; `failNext` makes the next call of a method fail. */
class RecordingSlackApi implements SlackApi {
  public readonly posted: Array<{ channel: string; text: string; blocks: SlackBlock[] }> = [];
  public readonly updated: Array<{ channel: string; ts: string; text: string; blocks: SlackBlock[] }> = [];
  public failNext: 'postMessage' | 'updateMessage' | undefined;

  public async postMessage(message: { channel: string; text: string; blocks: SlackBlock[] }) {
    this.fail('postMessage');
    this.posted.push(message);
    return { ts: `1700000000.${String(this.posted.length).padStart(6, '0')}` };
  }

  public async updateMessage(message: { channel: string; ts: string; text: string; blocks: SlackBlock[] }) {
    this.fail('updateMessage');
    this.updated.push(message);
  }

  public async postEphemeral(): Promise<void> {}

  private fail(method: 'postMessage' | 'updateMessage'): void {
    if (this.failNext !== method) return;
    this.failNext = undefined;
    throw Object.assign(new Error('down'), { name: 'Slack_service_unavailable' });
  }
}

const EVERYONE: SlackRoute = { channelId: 'C0EVERYONE' };
const FINANCE: SlackRoute = { channelId: 'C0FINANCE', approverGroup: 'finance' };

describe('syncSlackMessages', () => {
  let dynamo: RunningDynalite;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await dynamo.stop();
  });

  let tables = 0;
  /** The harness's use cases with a Slack channel, its messages in a table of their own (run ids repeat across harnesses). */
  async function slackChannelOf(
    harness: UseCaseHarness,
  ): Promise<{ dependencies: SlackDependencies; api: RecordingSlackApi }> {
    const api = new RecordingSlackApi();
    tables += 1;
    const tableName = `${dynamo.tableName}-${tables}`;
    await ensureTable(dynamo.client, tableName);
    const store = new DynamoSlackStore(
      new RunTable(dynamo.documentClient, tableName, undefined, harness.clock),
    );
    return {
      api,
      dependencies: {
        ...harness.dependencies,
        slack: {
          api,
          messages: store,
          routes: [EVERYONE, FINANCE],
          cardUrl: (runId) => `https://inbox/#run-${runId}`,
        },
      },
    };
  }

  it('posts a waiting card once to each route that takes it, however often its event comes', async () => {
    // Prepare
    const harness = createHarness();
    const { dependencies, api } = await slackChannelOf(harness);
    const { runId, turn } = await startPausedRun(harness);

    // Act
    await syncSlackMessages(dependencies, runId);
    await syncSlackMessages(dependencies, runId);
    await Promise.all([syncSlackMessages(dependencies, runId), syncSlackMessages(dependencies, runId)]);

    // Assess: the open route only (the card is routed to nobody in particular), once
    expect(api.posted.map((message) => message.channel)).toEqual(['C0EVERYONE']);
    expect(await dependencies.slack.messages.listMessages(runId)).toEqual([
      expect.objectContaining({
        runId,
        turn,
        channelId: 'C0EVERYONE',
        state: 'open',
        ts: '1700000000.000001',
      }),
    ]);
    expect(JSON.stringify(api.posted[0]?.blocks)).toContain('title: \\"Home\\" → \\"Spring sale\\"');
  });

  it('gives a failed post’s claim back, counts the failure, and posts on the next attempt', async () => {
    // Prepare
    const harness = createHarness();
    const { dependencies, api } = await slackChannelOf(harness);
    const { runId } = await startPausedRun(harness);
    api.failNext = 'postMessage';

    // Act
    const failed = await syncSlackMessages(dependencies, runId).then(
      () => 'posted',
      (error: Error) => error.name,
    );
    await syncSlackMessages(dependencies, runId);

    // Assess
    expect(failed).toBe('Slack_service_unavailable');
    expect(harness.metrics.counts.get('ChannelDeliveryFailures')).toBe(1);
    expect(api.posted).toHaveLength(1);
  });

  it('posts a message whose poster died after its claim only once the claim is stale', async () => {
    // Prepare: a claim nobody recorded (the process died between the claim and the post)
    const harness = createHarness();
    const { dependencies, api } = await slackChannelOf(harness);
    const { runId, turn } = await startPausedRun(harness);
    const now = harness.clock.now().toISOString();
    await dependencies.slack.messages.claimPosting({ runId, turn, channelId: 'C0EVERYONE' }, now, now);

    // Act
    await syncSlackMessages(dependencies, runId);
    const whileFresh = api.posted.length;
    harness.clock.advance(SLACK_POSTING_STALE_MILLISECONDS + 1000);
    await syncSlackMessages(dependencies, runId);

    // Assess
    expect(whileFresh).toBe(0);
    expect(api.posted).toHaveLength(1);
  });

  it('updates the message once when its card is decided, saying by whom and where, and drops its buttons', async () => {
    // Prepare
    const harness = createHarness();
    const { dependencies, api } = await slackChannelOf(harness);
    const { runId, turn } = await startPausedRun(harness);
    await syncSlackMessages(dependencies, runId);
    const digest = await digestShownTo(harness, APPROVER, runId);

    // Act
    await decideRun(harness.dependencies, APPROVER, runId, { decision: 'approve', digest });
    const [closed] = harness.notifier.closedCards;
    await syncSlackMessages(dependencies, runId, { closed: { turn, because: 'decided' } });
    await syncSlackMessages(dependencies, runId, { closed: { turn, because: 'decided' } });

    // Assess
    expect(harness.notifier.closedCards).toEqual([
      { runId, turn, because: 'decided', closedAt: harness.clock.now().toISOString(), approverGroups: [] },
    ]);
    expect(closed?.runId).toBe(runId);
    expect(api.updated).toHaveLength(1);
    expect(JSON.stringify(api.updated[0]?.blocks)).toContain(TEXTS.channelDecided('approve', 'alice', 'api'));
    expect(JSON.stringify(api.updated[0]?.blocks)).not.toContain('countersign.approve');
    expect((await dependencies.slack.messages.listMessages(runId))[0]?.state).toBe('closed');
  });

  it('says an edit closed the card (announced once, its calls waiting on a fresh card), not that it was approved', async () => {
    // Prepare
    const harness = createHarness();
    const { dependencies, api } = await slackChannelOf(harness);
    const { runId, turn } = await startPausedRun(harness);
    await syncSlackMessages(dependencies, runId);
    const digest = await digestShownTo(harness, APPROVER, runId);

    // Act
    const outcome = await decideRun(harness.dependencies, APPROVER, runId, {
      decision: 'edit',
      digest,
      edits: [{ index: 0, arguments: { pageId: '12', title: 'Spring sale, edited' } }],
    });
    await syncSlackMessages(dependencies, runId, { closed: { turn, because: 'decided' } });

    // Assess
    expect(outcome).toMatchObject({ kind: 'decided', decision: 'edit' });
    expect(harness.notifier.closedCards).toEqual([
      { runId, turn, because: 'decided', closedAt: harness.clock.now().toISOString(), approverGroups: [] },
    ]);
    expect(api.updated).toHaveLength(1);
    const shown = JSON.stringify(api.updated[0]?.blocks);
    expect(shown).toContain(TEXTS.channelDecided('edit', 'alice', 'api'));
    expect(shown).not.toContain(TEXTS.channelDecided('approve', 'alice', 'api'));
  });

  it('says a card expired', async () => {
    // Prepare
    const harness = createHarness();
    const { dependencies, api } = await slackChannelOf(harness);
    const { runId } = await startPausedRun(harness);
    await syncSlackMessages(dependencies, runId);

    // Act
    await markRunExpired(harness.dependencies, { runId });
    await syncSlackMessages(dependencies, runId);

    // Assess
    expect(JSON.stringify(api.updated[0]?.blocks)).toContain(TEXTS.channelClosed('expired'));
  });

  it('keeps a message open when its update fails, and updates it on the next attempt', async () => {
    // Prepare
    const harness = createHarness();
    const { dependencies, api } = await slackChannelOf(harness);
    const { runId } = await startPausedRun(harness);
    await syncSlackMessages(dependencies, runId);
    await markRunExpired(harness.dependencies, { runId });
    api.failNext = 'updateMessage';

    // Act
    await expect(syncSlackMessages(dependencies, runId)).rejects.toThrow('down');
    const stillOpen = (await dependencies.slack.messages.listMessages(runId))[0]?.state;
    await syncSlackMessages(dependencies, runId);

    // Assess
    expect(stillOpen).toBe('open');
    expect(api.updated).toHaveLength(1);
    expect((await dependencies.slack.messages.listMessages(runId))[0]?.state).toBe('closed');
  });

  it('closes the messages of a card that cannot be opened, and ends its run', async () => {
    // Prepare: the card is posted, then its sealed card is tampered with
    const harness = createHarness();
    const { dependencies, api } = await slackChannelOf(harness);
    const { runId } = await startPausedRun(harness);
    await syncSlackMessages(dependencies, runId);
    const stored = await harness.runs.getCard(runId);
    if (stored === undefined) throw new Error('no card');
    await harness.runs.putCard({ ...stored, sealedCard: stored.sealedCard.map((byte) => byte ^ 0xff) });

    // Act
    await syncSlackMessages(dependencies, runId, { refresh: true });

    // Assess
    expect(JSON.stringify(api.updated.at(-1)?.blocks)).toContain(TEXTS.cardUnopenable);
    expect((await harness.runs.getRunRecord(runId))?.status).toBe('failed');
    expect(harness.metrics.counts.get('SealedStateRejections')).toBe(1);
  });

  it('posts a group’s card to the group’s channel only, as its least-privileged member sees it', async () => {
    // Prepare: the card goes to finance; one of its members may not read page 12
    const harness = createHarness({ configuration: { approverGroups: ['finance'] } });
    await harness.dependencies.users.putUser({ ...APPROVER, groups: ['finance'] });
    await harness.dependencies.users.putUser({
      ...APPROVER,
      userId: 'fred',
      groups: ['finance'],
      pageAccess: [],
    });
    const { dependencies, api } = await slackChannelOf(harness);
    const { runId } = await startPausedRun(harness);

    // Act
    await syncSlackMessages(dependencies, runId);

    // Assess
    expect(api.posted.map((message) => message.channel)).toEqual(['C0FINANCE']);
    expect(JSON.stringify(api.posted[0]?.blocks)).toContain(TEXTS.channelPreviewWithheld);
  });

  it('says on the messages posted that a card escalated, and posts it to the group it reached, when Run Awaiting Approval says escalated', async () => {
    // Prepare: a card for finance that escalates to leads after 30 minutes
    const leads: SlackRoute = { channelId: 'C0LEADS', approverGroup: 'leads' };
    const harness = createHarness({
      configuration: {
        approverGroups: ['finance'],
        escalation: [{ afterMinutes: 30, approverGroups: ['leads'] }],
      },
    });
    await harness.dependencies.users.putUser({ ...APPROVER, groups: ['finance'] });
    await harness.dependencies.users.putUser(
      person('lena', { grants: ['agent_approve'], groups: ['leads'] }),
    );
    const channel = await slackChannelOf(harness);
    const dependencies = {
      ...channel.dependencies,
      slack: { ...channel.dependencies.slack, routes: [FINANCE, leads] },
    };
    const handle = createSlackNotifyHandler(dependencies);
    const { runId } = await startPausedRun(harness);
    const event = (reason: 'paused' | 'escalated') => ({
      source: 'countersign',
      'detail-type': 'Run Awaiting Approval',
      detail: {
        runId,
        toolNames: ['update_page_metadata'],
        pausedAt: harness.clock.now().toISOString(),
        approverGroups: [],
        reason,
      },
    });
    await handle(event('paused'));
    const [timer] = harness.escalations.armed;
    harness.clock.advance(30 * 60_000);
    const { at: _at, ...step } = timer ?? { at: '', runId: '', turn: 0, digest: '', step: 0 };
    await escalateCardOnTimer(harness.dependencies, step);

    // Act
    await handle(event('escalated'));

    // Assess: finance's message now says so (buttons kept: finance may still decide), leads get theirs
    expect(channel.api.posted.map((message) => message.channel)).toEqual(['C0FINANCE', 'C0LEADS']);
    expect(channel.api.updated.map((message) => message.channel)).toEqual(['C0FINANCE']);
    const updated = JSON.stringify(channel.api.updated[0]?.blocks);
    expect(updated).toContain(TEXTS.channelEscalated(['leads']));
    expect(updated).toContain('"action_id"');
    expect(JSON.stringify(channel.api.posted[1]?.blocks)).toContain(TEXTS.channelEscalated(['leads']));
  });
});
