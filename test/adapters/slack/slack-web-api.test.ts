import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackWebApi } from '../../../lambdas/adapters/slack/slack-web-api.js';
import { type MisbehavingServer, startMisbehavingServer } from '../../support/misbehaving-server.js';
import { SlackStandIn } from '../../support/slack-stand-in.js';

const failureOf = (call: Promise<unknown>) =>
  call.then(
    () => 'succeeded',
    (error: Error) => error.name,
  );

describe('SlackWebApi', () => {
  const slack = new SlackStandIn();
  let apiUrl: string;
  let server: MisbehavingServer;
  let elsewhere: MisbehavingServer;
  beforeAll(async () => {
    apiUrl = await slack.start();
    server = await startMisbehavingServer();
    elsewhere = await startMisbehavingServer();
  });
  afterAll(async () => {
    await slack.stop();
    await server.stop();
    await elsewhere.stop();
  });

  it('posts, updates and whispers through Slack’s Web API with the bot token, pinging nobody', async () => {
    // Prepare
    const api = new SlackWebApi({ botToken: async () => slack.botToken, apiUrl });

    // Act
    const { ts } = await api.postMessage({ channel: 'C0API', text: 'Approval needed', blocks: [] });
    await api.updateMessage({ channel: 'C0API', ts, text: 'Approved', blocks: [] });
    await api.postEphemeral({ channel: 'C0API', user: 'U0ANA', text: 'Not linked' });

    // Assess
    expect(slack.messagesIn('C0API')).toEqual([
      {
        channel: 'C0API',
        ts,
        versions: [
          { text: 'Approval needed', blocks: [] },
          { text: 'Approved', blocks: [] },
        ],
      },
    ]);
    expect(slack.ephemerals).toEqual([{ channel: 'C0API', user: 'U0ANA', text: 'Not linked' }]);
    expect(slack.calls.map((call) => call.body.link_names)).toEqual([false, false, false]);
  });

  it('fails a call Slack answers with `ok: false`, named after Slack’s error code', async () => {
    // Prepare
    const wrongToken = new SlackWebApi({ botToken: async () => 'xoxb-revoked', apiUrl });
    const api = new SlackWebApi({ botToken: async () => slack.botToken, apiUrl });

    // Act
    const unauthorised = await failureOf(wrongToken.postMessage({ channel: 'C0API', text: 'x', blocks: [] }));
    const missing = await failureOf(
      api.updateMessage({ channel: 'C0API', ts: '1.999', text: 'x', blocks: [] }),
    );

    // Assess
    expect([unauthorised, missing]).toEqual(['Slack_invalid_auth', 'Slack_message_not_found']);
  });

  it('follows no redirect, so the bot token never reaches another server', async () => {
    // Prepare
    server.behave({ kind: 'redirect', status: 307, location: `${elsewhere.url}/api/chat.postMessage` });
    const api = new SlackWebApi({ botToken: async () => 'xoxb-secret-token', apiUrl: `${server.url}/api` });

    // Act
    const failure = await failureOf(api.postMessage({ channel: 'C0API', text: 'x', blocks: [] }));

    // Assess
    expect(failure).toBe('Slack_redirect_refused');
    expect(elsewhere.received).toEqual([]);
  });

  it('reads no answer past its bound', async () => {
    // Prepare
    server.behave({ kind: 'bloat', bytes: 2 * 1024 * 1024, encoding: 'gzip', declareLength: false });
    const api = new SlackWebApi({ botToken: async () => 'xoxb-1', apiUrl: `${server.url}/api` });

    // Act
    const failure = await failureOf(api.postMessage({ channel: 'C0API', text: 'x', blocks: [] }));

    // Assess
    expect(failure).toBe('Slack_too_large');
  });
});
