import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_RECEIPT_PUBLIC_KEY_FILE } from '../../lambdas/adapters/local-receipt-signer.js';
import { DECISION_RECORD_SCHEMA_VERSION } from '../../lambdas/core/approvals/decision-record.js';
import { SLACK_ACTIONS } from '../../lambdas/core/channels/slack-message.js';
import { verifyReceipt } from '../../lambdas/core/receipts/verify-receipt.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf } from '../support/api-answers.js';
import {
  type MeteredTestRuntime,
  removeTestData,
  settle,
  startRunAndSettle,
  startTestRuntime,
} from '../support/local-runtime.js';
import { SlackStandIn, type StandInMessage } from '../support/slack-stand-in.js';
import { decide, demoUser } from './approvers-support.js';

const TEAM = 'T0STANDIN';
const PAGES_CHANNEL = 'C0PAGES';
const EVERYONE_CHANNEL = 'C0EVERYONE';
const APPEND = 'append_page_keywords';
/** Slack users the admin linked: Abe and Rhea approve, Eda started the runs and may not. */
const ABE = { id: 'U0ABE', teamId: TEAM };
const RHEA = { id: 'U0RHEA', teamId: TEAM };
const EDA = { id: 'U0EDA', teamId: TEAM };
const STRANGER = { id: 'U0STRANGER', teamId: TEAM };

describe('the Slack channel (issue #23)', () => {
  const slack = new SlackStandIn();
  let runtime: MeteredTestRuntime;
  let interactionUrl: string;

  beforeAll(async () => {
    const apiUrl = await slack.start();
    runtime = await startTestRuntime({
      channels: {
        slack: {
          signingSecret: slack.signingSecret,
          botToken: slack.botToken,
          apiUrl,
          routes: [
            { channelId: PAGES_CHANNEL, approverGroup: 'pages-team' },
            { channelId: EVERYONE_CHANNEL },
          ],
        },
      },
    });
    interactionUrl = `${runtime.url}/integrations/slack/interactions`;
    // The pages team: two approvers with the same rights on the demo pages.
    for (const userId of ['approver', 'reviewer']) {
      const user = demoUser(userId);
      await runtime.dependencies.users.putUser({
        ...user,
        groups: ['pages-team'],
        toolAccess: ['update_page_metadata', APPEND],
      });
    }
    const configuration = await runtime.client('admin').putConfiguration({
      path: { id: 'slack-pages' },
      body: {
        configurationId: 'slack-pages',
        label: 'Pages <!channel> team',
        provider: 'scripted',
        model: 'scripted-v1',
        allowedTools: ['get_page', 'update_page_metadata', APPEND],
        approverGroups: ['pages-team'],
      },
    });
    expect(configuration.status).toBe(200);
    for (const [slackUserId, userId] of [
      [ABE.id, 'approver'],
      [RHEA.id, 'reviewer'],
      [EDA.id, 'editor'],
    ] as const) {
      const linked = await runtime.client('admin').putSlackUser({
        path: { id: slackUserId },
        body: { slackUserId, slackTeamId: TEAM, userId },
      });
      expect(linked.status).toBe(200);
    }
  });

  afterAll(async () => {
    await runtime.stop();
    await slack.stop();
    await removeTestData(runtime);
  });

  /** A run of the pages team, paused, and its message once the channel has posted it. */
  async function pausedPagesRun(
    instruction: string,
  ): Promise<{ runId: string; turn: number; message: StandInMessage }> {
    const { runId, view } = await startRunAndSettle(runtime, instruction, { configurationId: 'slack-pages' });
    expect(view.status).toBe('waiting');
    await runtime.channels.settle();
    return { runId, turn: view.turn, message: messageOf(PAGES_CHANNEL, runId) };
  }

  function messageOf(channel: string, runId: string, index = 0): StandInMessage {
    const messages = slack
      .messagesIn(channel)
      .filter((message) => JSON.stringify(message.versions[0]).includes(runId));
    const message = messages[index];
    if (message === undefined) throw new Error(`no message ${index} of ${runId} in ${channel}`);
    return message;
  }

  const latest = (message: StandInMessage) => message.versions.at(-1) ?? { text: '', blocks: [] };

  async function decisionOf(runId: string, turn: number) {
    return runtime.dependencies.runs.getDecision(runId, turn);
  }

  it('posts the card when the run pauses: label, the call, its before → after preview, the deadline, buttons and the link', async () => {
    // Act
    const { runId, message } = await pausedPagesRun(
      "Set the description of page 12 to 'Spring <!here> sale'",
    );

    // Assess
    const shown = SlackStandIn.textOf(message.versions[0] ?? { blocks: [] });
    expect(message.versions).toHaveLength(1);
    expect(SlackStandIn.buttonsOf(message.versions[0] ?? { blocks: [] })).toEqual([
      SLACK_ACTIONS.approve,
      SLACK_ACTIONS.reject,
      SLACK_ACTIONS.open,
    ]);
    expect(shown).toContain('update_page_metadata');
    expect(shown).toContain('Hand-written by the marketing team'); // the value it would replace
    expect(shown).toContain('Spring &lt;!here&gt; sale'); // escaped: it neither pings nor links
    expect(shown).toContain('Pages &lt;!channel&gt; team');
    expect(JSON.stringify(message.versions)).not.toMatch(/<!here>|<!channel>/);
    expect(shown).toContain('<!date^');
    expect(JSON.stringify(message.versions[0])).toContain(`"url":"${runtime.url}/inbox/runs/${runId}"`);
    // A group's card goes to the group's channel only.
    expect(
      slack.messagesIn(EVERYONE_CHANNEL).filter((posted) => JSON.stringify(posted).includes(runId)),
    ).toEqual([]);
    expect(slack.calls.filter((call) => call.method === 'chat.postMessage').at(-1)?.body).toMatchObject({
      link_names: false,
      unfurl_links: false,
    });
  });

  it('withholds a preview that not every approver the channel reaches may read', async () => {
    // Act: a card routed to every approver, among them ops-approver, who has no page rights
    const { runId } = await startRunAndSettle(runtime, "Set the description of page 12 to 'Open to all'");
    await runtime.channels.settle();

    // Assess
    const shown = SlackStandIn.textOf(messageOf(EVERYONE_CHANNEL, runId).versions[0] ?? { blocks: [] });
    expect(shown).toContain(TEXTS.channelPreviewWithheld);
    expect(shown).not.toContain('Hand-written by the marketing team');
  });

  it('approves by button through the decision use case, records the channel, and updates the message', async () => {
    // Prepare
    const { runId, turn, message } = await pausedPagesRun("Set the title of page 12 to 'Slack approved'");

    // Act
    const pressed = await slack.press(interactionUrl, {
      message,
      actionId: SLACK_ACTIONS.approve,
      user: ABE,
    });
    const done = await settle(runtime, runId, 'editor', turn);
    await runtime.channels.settle();

    // Assess
    expect(pressed.status).toBe(200);
    expect(done.status).toBe('completed');
    expect((await runtime.dependencies.pages.getPage('12'))?.title).toBe('Slack approved');
    expect(await decisionOf(runId, turn)).toMatchObject({
      decision: 'approve',
      decidedBy: 'approver',
      channel: 'slack',
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
    });
    expect(SlackStandIn.buttonsOf(latest(message))).toEqual([SLACK_ACTIONS.open]);
    expect(SlackStandIn.textOf(latest(message))).toContain(
      TEXTS.channelDecided('approve', 'approver', 'slack'),
    );
    // The receipt holds the decision, signed, as a decision through the API would be.
    const keyPath = join(runtime.baseDirectory, '.countersign', 'keys', LOCAL_RECEIPT_PUBLIC_KEY_FILE);
    const publicKey = createPublicKey(await readFile(keyPath, 'utf8'));
    const receipt = bodyOf(await runtime.client('editor').getRunReceipt({ path: { id: runId } }));
    expect(verifyReceipt(receipt, { publicKey }, { runId })).toMatchObject({
      kind: 'verified',
      entries: [{ kind: 'decision', decision: 'approve', by: 'approver', signed: true }],
    });
  });

  it('updates the message when the card is decided elsewhere or cancelled', async () => {
    // Prepare
    const rejected = await pausedPagesRun("Set the title of page 14 to 'Rejected in the inbox'");
    const cancelled = await pausedPagesRun("Set the title of page 14 to 'Cancelled by its owner'");

    // Act
    const digest = (await runtime.dependencies.runs.getCard(rejected.runId))?.digest;
    expect((await decide(runtime, rejected.runId, { digest, decision: 'reject' }, 'reviewer')).status).toBe(
      200,
    );
    expect((await runtime.client('editor').cancelRun({ path: { id: cancelled.runId } })).status).toBe(200);
    await runtime.channels.settle();

    // Assess
    expect(SlackStandIn.textOf(latest(rejected.message))).toContain(
      TEXTS.channelDecided('reject', 'reviewer', 'api'),
    );
    expect(SlackStandIn.textOf(latest(cancelled.message))).toContain(TEXTS.channelClosed('cancelled'));
    for (const { message } of [rejected, cancelled]) {
      expect(SlackStandIn.buttonsOf(latest(message))).toEqual([SLACK_ACTIONS.open]);
    }
    expect(runtime.closedCards.filter((event) => event.runId === cancelled.runId)).toEqual([
      expect.objectContaining({ because: 'cancelled', turn: cancelled.turn }),
    ]);
  });

  it('refuses forged, expired and replayed requests with a 401, deciding nothing', async () => {
    // Prepare: a press by a user the admin has not linked is signed and refused; it is then linked
    const { runId, turn, message } = await pausedPagesRun("Set the title of page 14 to 'Never by a forger'");
    const unlinked = await slack.press(interactionUrl, {
      message,
      actionId: SLACK_ACTIONS.approve,
      user: STRANGER,
    });
    await runtime.client('admin').putSlackUser({
      path: { id: STRANGER.id },
      body: { slackUserId: STRANGER.id, slackTeamId: TEAM, userId: 'approver' },
    });
    const ephemeralsBefore = slack.ephemerals.length;

    // Act
    const forged = await slack.press(interactionUrl, {
      message,
      actionId: SLACK_ACTIONS.approve,
      user: ABE,
      signingSecret: 'not-the-signing-secret',
    });
    const expired = await slack.press(interactionUrl, {
      message,
      actionId: SLACK_ACTIONS.approve,
      user: ABE,
      timestamp: Math.floor(Date.now() / 1000) - 6 * 60,
    });
    const replayed = await SlackStandIn.send(unlinked.sent);
    const unsigned = await fetch(interactionUrl, { method: 'POST', body: unlinked.sent.body });

    // Assess
    expect(unlinked.status).toBe(200);
    expect(slack.ephemerals.at(ephemeralsBefore - 1)).toEqual({
      channel: PAGES_CHANNEL,
      user: STRANGER.id,
      text: TEXTS.slackNotLinked(STRANGER.id),
    });
    for (const refused of [forged, expired, replayed]) {
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body)).toEqual({
        error: { code: 'unauthenticated', message: TEXTS.slackInteractionRefused },
      });
    }
    expect(unsigned.status).toBe(401);
    expect(await decisionOf(runId, turn)).toBeUndefined();
    expect((await runtime.dependencies.runs.getCard(runId))?.state).toBe('open');
    expect(slack.ephemerals).toHaveLength(ephemeralsBefore);
    expect(SlackStandIn.buttonsOf(latest(message))).toContain(SLACK_ACTIONS.approve);
  });

  it('refuses a press through the decision gates: the run’s owner may not approve', async () => {
    // Prepare
    const { runId, turn, message } = await pausedPagesRun("Set the title of page 12 to 'Self-approved'");

    // Act
    const pressed = await slack.press(interactionUrl, {
      message,
      actionId: SLACK_ACTIONS.approve,
      user: EDA,
    });

    // Assess
    expect(pressed.status).toBe(200);
    expect(slack.ephemerals.at(-1)).toEqual({
      channel: PAGES_CHANNEL,
      user: EDA.id,
      text: TEXTS.grantRefused('agent_approve'),
    });
    expect(await decisionOf(runId, turn)).toBeUndefined();
  });

  it('refuses the button of a stale message and updates it; the fresh card gets its own message', async () => {
    // Prepare: the relative writer's card, approved by button after its page changed meanwhile
    await runtime.dependencies.pages.updateMetadata('14', { keywords: 'autumn' }, 'admin');
    const { runId, turn, message } = await pausedPagesRun(
      `Call ${APPEND} with ${JSON.stringify({ pageId: '14', keywords: ['harvest'] })}`,
    );
    await runtime.dependencies.pages.updateMetadata('14', { keywords: 'autumn, winter' }, 'admin');
    const approved = await slack.press(interactionUrl, {
      message,
      actionId: SLACK_ACTIONS.approve,
      user: ABE,
    });
    const reopened = await settle(runtime, runId, 'editor', turn);
    await runtime.channels.settle();

    // Act: Rhea's client still shows the first version of the first message
    const stale = await slack.press(interactionUrl, {
      message,
      version: 0,
      actionId: SLACK_ACTIONS.approve,
      user: RHEA,
    });
    await runtime.channels.settle();

    // Assess
    expect(approved.status).toBe(200);
    expect(reopened).toMatchObject({ status: 'waiting', turn: turn + 1 });
    expect(stale.status).toBe(200);
    expect(slack.ephemerals.at(-1)).toEqual({
      channel: PAGES_CHANNEL,
      user: RHEA.id,
      text: TEXTS.staleDigest,
    });
    expect(await decisionOf(runId, turn + 1)).toBeUndefined();
    // The first message says who approved; the fresh card (the same call, the page changed) has its own.
    expect(SlackStandIn.textOf(latest(message))).toContain(
      TEXTS.channelDecided('approve', 'approver', 'slack'),
    );
    expect(SlackStandIn.buttonsOf(latest(message))).toEqual([SLACK_ACTIONS.open]);
    const fresh = messageOf(PAGES_CHANNEL, runId, 1);
    expect(SlackStandIn.buttonsOf(latest(fresh))).toContain(SLACK_ACTIONS.approve);
    expect(SlackStandIn.textOf(latest(fresh))).toContain(TEXTS.recordChanged);
    expect(await runtime.dependencies.pages.getPage('14')).toMatchObject({ keywords: 'autumn, winter' });
  });

  it('counts k-of-n approvals from Slack, shows the tally, and delivers once K distinct approvers pressed', async () => {
    // Prepare: the two-approver demo configuration, routed to every approver
    const { runId, view } = await startRunAndSettle(runtime, "Set the author of page 12 to 'Two of us'", {
      configurationId: 'demo-two-approvers',
    });
    await runtime.channels.settle();
    const message = messageOf(EVERYONE_CHANNEL, runId);

    // Act
    const first = await slack.press(interactionUrl, { message, actionId: SLACK_ACTIONS.approve, user: ABE });
    const tallied = SlackStandIn.textOf(latest(message));
    const second = await slack.press(interactionUrl, {
      message,
      actionId: SLACK_ACTIONS.approve,
      user: RHEA,
    });
    const done = await settle(runtime, runId, 'editor', view.turn);
    await runtime.channels.settle();

    // Assess
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(tallied).toContain(TEXTS.approvalProgress(1, 2, ['approver']));
    expect(done.status).toBe('completed');
    expect(await decisionOf(runId, view.turn)).toMatchObject({
      approvedBy: ['approver', 'reviewer'],
      channel: 'slack',
    });
    expect(SlackStandIn.textOf(latest(message))).toContain(
      TEXTS.channelDecided('approve', 'reviewer', 'slack'),
    );
  });

  it('keeps deciding when Slack fails: a decision stands, and the failure is counted', async () => {
    // Prepare
    const { runId, turn, message } = await pausedPagesRun("Set the title of page 20 to 'Slack is down'");
    slack.failing.set('chat.update', 'service_unavailable');

    // Act
    const digest = (await runtime.dependencies.runs.getCard(runId))?.digest;
    const decided = await decide(runtime, runId, { digest, decision: 'approve' }, 'reviewer');
    await runtime.channels.settle();
    slack.failing.clear();

    // Assess
    expect(decided.status).toBe(200);
    expect(await decisionOf(runId, turn)).toMatchObject({ decision: 'approve', channel: 'api' });
    expect(SlackStandIn.buttonsOf(latest(message))).toContain(SLACK_ACTIONS.approve);
    expect(runtime.logLines.some((line) => line.includes('Slack_service_unavailable'))).toBe(true);
    expect(runtime.metricLines.some((line) => line.includes('ChannelDeliveryFailures'))).toBe(true);
  });
});
