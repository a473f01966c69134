import type { SlackBlock } from '../../core/channels/slack-message.js';
import type { SlackApi } from '../../core/channels/slack-ports.js';
import { callOutbound } from '../outbound/outbound-fetch.js';

/** Slack's Web API, where the deployed channel posts. */
const SLACK_API_URL = 'https://slack.com/api';

/** One Slack call's deadline: an event's retry comes later, and an interaction has 3 s in all. */
const SLACK_CALL_TIMEOUT_MILLISECONDS = 5_000;
/** Slack's answers to these methods are small; a larger one is not Slack's. */
const MAX_RESPONSE_BYTES = 256 * 1024;
const SLACK_ERROR_CODE = /^[a-z][a-z_]{0,63}$/;

export interface SlackWebApiOptions {
  /** The bot token (`xoxb-…`), read when a call needs it (Secrets Manager deployed). */
  readonly botToken: () => Promise<string>;
  /** @default SLACK_API_URL */
  readonly apiUrl?: string;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/**
 * The Slack channel's three Web API methods over plain HTTPS (fetch, JSON bodies, the bot token as
 * a bearer token): chat.postMessage, chat.update and chat.postEphemeral. Plain calls rather than
 * `@slack/web-api`, which would add its HTTP client and retry machinery to a cold start for three
 * POSTs. Each call goes through the outbound policy (adapters/outbound): a deadline, no redirect
 * followed (the token never leaves for another origin), at most 256 KB read while it streams.
 * Slack answers `{ok: false, error}` with a 200: that is a failure too, named `Slack_<error>`
 * (e.g. `Slack_not_in_channel`; a refusal of the policy `Slack_timed_out`, `Slack_too_large`, ...)
 * so logs say which without carrying anything else of the answer.
 *
 * @example
 * const slack = new SlackWebApi({ botToken: () => Promise.resolve(process.env.SLACK_BOT_TOKEN ?? '') });
 * const { ts } = await slack.postMessage({ channel: 'C0123', text: 'Approval needed', blocks });
 */
export class SlackWebApi implements SlackApi {
  private readonly apiUrl: string;

  public constructor(private readonly options: SlackWebApiOptions) {
    // No regular expression: /\/+$/ backtracks quadratically on a long run of slashes.
    let apiUrl = options.apiUrl ?? SLACK_API_URL;
    while (apiUrl.endsWith('/')) apiUrl = apiUrl.slice(0, -1);
    this.apiUrl = apiUrl;
  }

  public async postMessage(message: {
    channel: string;
    text: string;
    blocks: SlackBlock[];
  }): Promise<{ ts: string }> {
    const answer = await this.call('chat.postMessage', {
      ...message,
      // Nothing a card shows may ping anyone or unfold a preview of a link it carries.
      link_names: false,
      unfurl_links: false,
      unfurl_media: false,
    });
    if (typeof answer.ts !== 'string') throw slackFailure('missing_ts');
    return { ts: answer.ts };
  }

  public async updateMessage(message: {
    channel: string;
    ts: string;
    text: string;
    blocks: SlackBlock[];
  }): Promise<void> {
    await this.call('chat.update', { ...message, link_names: false });
  }

  public async postEphemeral(message: { channel: string; user: string; text: string }): Promise<void> {
    await this.call('chat.postEphemeral', { ...message, link_names: false });
  }

  private async call(method: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const answer = await callOutbound(
      {
        url: `${this.apiUrl}/${method}`,
        method: 'POST',
        headers: {
          authorization: `Bearer ${await this.options.botToken()}`,
          'content-type': 'application/json; charset=utf-8',
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(SLACK_CALL_TIMEOUT_MILLISECONDS),
      },
      // The bot token never follows a redirect, not even within Slack's origin.
      { redirects: 'none', maxResponseBytes: MAX_RESPONSE_BYTES },
      this.options.fetch === undefined ? {} : { fetch: this.options.fetch },
    );
    if (answer.kind === 'refused') throw slackFailure(answer.reason.replaceAll('-', '_'));
    if (answer.status !== 200) throw slackFailure(answer.status === 429 ? 'ratelimited' : 'http_status');
    const json = readJson(answer.body);
    if (json?.ok !== true) throw slackFailure(typeof json?.error === 'string' ? json.error : 'not_ok');
    return json;
  }
}

/** The answer's JSON object; anything else is no answer of Slack's. */
function readJson(body: Uint8Array): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(body));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A failed Slack call, named after Slack's error code (a machine word, nothing of the request). */
function slackFailure(code: string): Error {
  const error = new Error('The Slack API call failed.');
  error.name = SLACK_ERROR_CODE.test(code) ? `Slack_${code}` : 'Slack_error';
  return error;
}
