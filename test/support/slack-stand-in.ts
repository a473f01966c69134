import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One message as the stand-in keeps it: every version chat.postMessage and chat.update gave it. */
export interface StandInMessage {
  channel: string;
  ts: string;
  /** Oldest first; the last is what the channel shows now. */
  versions: Array<{ text: string; blocks: Array<Record<string, unknown>> }>;
}

/** A request as sent to the app's interaction URL: enough to send it again byte for byte. */
export interface SentInteraction {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface PressOptions {
  /** The message whose button is pressed. */
  message: StandInMessage;
  /** The button's `action_id`. */
  actionId: string;
  /** Who presses it, in which workspace. */
  user: { id: string; teamId: string };
  /** Which version of the message the presser sees (a client that has not refreshed). @default - the last */
  version?: number;
  /** @default - the stand-in's signing secret (a forger's differs) */
  signingSecret?: string;
  /** Seconds since the epoch the request says it was sent at. @default - now */
  timestamp?: number;
}

/**
 * A local Slack, speaking the parts of its protocol the channel uses: the Web API methods
 * chat.postMessage, chat.update and chat.postEphemeral (bearer token checked, `{ok, ...}` answers,
 * Slack's error codes), recording what was posted; and interactions, sent to the app's Request URL
 * as Slack sends a `block_actions` payload: form-encoded `payload=<json>`, signed as Slack documents
 * (`X-Slack-Signature: v0=hex(HMAC-SHA256(signing secret, "v0:<timestamp>:<raw body>"))`,
 * `X-Slack-Request-Timestamp`).
 */
export class SlackStandIn {
  public readonly messages: StandInMessage[] = [];
  public readonly ephemerals: Array<{ channel: string; user: string; text: string }> = [];
  /** Every Web API call, for tests that count them or look at what was sent. */
  public readonly calls: Array<{ method: string; body: Record<string, unknown> }> = [];
  public readonly signingSecret = randomBytes(16).toString('hex');
  public readonly botToken = `xoxb-${randomBytes(12).toString('hex')}`;
  /** Answer the next calls of these methods with this Slack error (`{ok: false, error}`). */
  public failing = new Map<string, string>();
  private server: Server | undefined;
  private url = '';
  private sequence = 0;

  /** Starts listening on 127.0.0.1; resolves with the Web API's base URL (`…/api`). */
  public async start(): Promise<string> {
    const server = createServer((request, response) => {
      void this.answer(request).then(
        (body) => {
          response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
          response.end(JSON.stringify(body));
        },
        () => {
          response.writeHead(500);
          response.end();
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
    return this.url;
  }

  public async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The messages posted to a channel, oldest first. */
  public messagesIn(channel: string): StandInMessage[] {
    return this.messages.filter((message) => message.channel === channel);
  }

  /** The buttons (`action_id`s) a message version shows. */
  public static buttonsOf(version: { blocks: Array<Record<string, unknown>> }): string[] {
    return version.blocks
      .filter((block) => block.type === 'actions')
      .flatMap((block) =>
        (block.elements as Array<{ action_id: string }>).map((element) => element.action_id),
      );
  }

  /** Every text of a message version, joined: what a reader sees. */
  public static textOf(version: { blocks: Array<Record<string, unknown>> }): string {
    return JSON.stringify(version.blocks.map((block) => block.text ?? block.elements));
  }

  /**
   * Presses a button of a message, as Slack does: the interaction payload posted to `url`,
   * form-encoded and signed. Answers the app's status and body, and the request (to replay it).
   */
  public async press(
    url: string,
    options: PressOptions,
  ): Promise<{ status: number; body: string; sent: SentInteraction }> {
    const shown = options.message.versions[options.version ?? options.message.versions.length - 1];
    if (shown === undefined) throw new Error('the message has no such version');
    const action = shown.blocks
      .filter((block) => block.type === 'actions')
      .flatMap((block) => block.elements as Array<Record<string, unknown>>)
      .find((element) => element.action_id === options.actionId);
    if (action === undefined) throw new Error(`the message shows no button ${options.actionId}`);
    const payload = {
      type: 'block_actions',
      user: { id: options.user.id, username: 'presser', name: 'presser', team_id: options.user.teamId },
      api_app_id: 'A0STANDIN',
      token: 'deprecated-verification-token',
      container: {
        type: 'message',
        message_ts: options.message.ts,
        channel_id: options.message.channel,
        is_ephemeral: false,
      },
      trigger_id: `${Date.now()}.${this.sequence}`,
      team: { id: options.user.teamId, domain: 'stand-in' },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: options.message.channel, name: 'approvals' },
      message: { type: 'message', ts: options.message.ts, text: shown.text, blocks: shown.blocks },
      response_url: 'https://hooks.slack.com/actions/T0/1/stand-in',
      actions: [{ ...action, block_id: 'countersign', action_ts: `${Date.now() / 1000}` }],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac('sha256', options.signingSecret ?? this.signingSecret)
      .update(`v0:${timestamp}:${body}`)
      .digest('hex')}`;
    const sent = {
      url,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': signature,
      },
      body,
    };
    return { ...(await SlackStandIn.send(sent)), sent };
  }

  /** Sends a recorded interaction again, byte for byte (a replay). */
  public static async send(sent: SentInteraction): Promise<{ status: number; body: string }> {
    const response = await fetch(sent.url, { method: 'POST', headers: sent.headers, body: sent.body });
    return { status: response.status, body: await response.text() };
  }

  private async answer(request: IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const method = (request.url ?? '').replace(/^\/api\//, '');
    if (request.headers.authorization !== `Bearer ${this.botToken}`)
      return { ok: false, error: 'invalid_auth' };
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    this.calls.push({ method, body });
    const failure = this.failing.get(method);
    if (failure !== undefined) return { ok: false, error: failure };
    const channel = String(body.channel);
    if (method === 'chat.postMessage') {
      this.sequence += 1;
      const ts = `${Math.floor(Date.now() / 1000)}.${String(this.sequence).padStart(6, '0')}`;
      this.messages.push({ channel, ts, versions: [versionOf(body)] });
      return { ok: true, channel, ts };
    }
    if (method === 'chat.update') {
      const message = this.messages.find(
        (candidate) => candidate.channel === channel && candidate.ts === body.ts,
      );
      if (message === undefined) return { ok: false, error: 'message_not_found' };
      message.versions.push(versionOf(body));
      return { ok: true, channel, ts: message.ts };
    }
    if (method === 'chat.postEphemeral') {
      this.ephemerals.push({ channel, user: String(body.user), text: String(body.text) });
      return { ok: true, message_ts: `${Date.now() / 1000}` };
    }
    return { ok: false, error: 'unknown_method' };
  }
}

function versionOf(body: Record<string, unknown>): StandInMessage['versions'][number] {
  return { text: String(body.text), blocks: (body.blocks ?? []) as Array<Record<string, unknown>> };
}
