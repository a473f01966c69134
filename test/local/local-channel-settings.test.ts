import { describe, expect, it } from 'vitest';
import { parseLocalChannels } from '../../lambdas/local/local-start-settings.js';

describe('the channels npm start switches on', () => {
  it('reads Slack and email from their variables, as the construct’s props', () => {
    expect(
      parseLocalChannels({
        COUNTERSIGN_SLACK_SIGNING_SECRET: 'secret',
        COUNTERSIGN_SLACK_BOT_TOKEN: 'xoxb-1',
        COUNTERSIGN_SLACK_ROUTES: '[{"channelId":"C0123456789","approverGroup":"finance"}]',
        COUNTERSIGN_SLACK_API_URL: 'http://127.0.0.1:9999/api',
        COUNTERSIGN_EMAIL_FROM_ADDRESS: 'countersign@example.com',
        COUNTERSIGN_SES_ENDPOINT: 'http://127.0.0.1:9998',
      }),
    ).toEqual({
      slack: {
        signingSecret: 'secret',
        botToken: 'xoxb-1',
        routes: [{ channelId: 'C0123456789', approverGroup: 'finance' }],
        apiUrl: 'http://127.0.0.1:9999/api',
      },
      email: { fromAddress: 'countersign@example.com', sesEndpoint: 'http://127.0.0.1:9998' },
    });
  });

  it('switches nothing on by default', () => {
    expect(parseLocalChannels({})).toEqual({});
  });

  it.each([
    [
      { COUNTERSIGN_SLACK_BOT_TOKEN: 'xoxb-1' },
      /needs COUNTERSIGN_SLACK_SIGNING_SECRET, COUNTERSIGN_SLACK_BOT_TOKEN, COUNTERSIGN_SLACK_ROUTES/,
    ],
    [
      {
        COUNTERSIGN_SLACK_SIGNING_SECRET: 's',
        COUNTERSIGN_SLACK_BOT_TOKEN: 't',
        COUNTERSIGN_SLACK_ROUTES: '[{"channelId":"general"}]',
      },
      /^COUNTERSIGN_SLACK_ROUTES: /,
    ],
    [
      {
        COUNTERSIGN_SLACK_SIGNING_SECRET: 's',
        COUNTERSIGN_SLACK_BOT_TOKEN: 't',
        COUNTERSIGN_SLACK_ROUTES: '[',
      },
      /is not JSON/,
    ],
    [{ COUNTERSIGN_EMAIL_FROM_ADDRESS: 'nobody' }, /must be an email address, not "nobody"/],
  ])('refuses %j, naming the variable', (environment, message) => {
    expect(() => parseLocalChannels(environment)).toThrow(message);
  });
});
