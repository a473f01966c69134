import type { SlackBlock } from '../../core/channels/slack-message.js';
import type { SlackApi } from '../../core/channels/slack-ports.js';

/** Slack's Web API, where the deployed channel posts. */
export const SLACK_API_URL = 'https://slack.com/api';

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
 * POSTs. Each call has a deadline, follows no redirect (the token never leaves for another
 * origin) and reads at most 256 KB. Slack answers `{ok: false, error}` with a 200: that is a
 * failure too, named `Slack_<error>` (e.g. `Slack_not_in_channel`) so logs say which without
 * carrying anything else of the answer.
 *
 * @example
 * const slack = new SlackWebApi({ botToken: () => Promise.resolve(process.env.SLACK_BOT_TOKEN ?? '') });
 * const { ts } = await slack.postMessage({ channel: 'C0123', text: 'Approval needed', blocks });
 */
export class SlackWebApi implements SlackApi {
  private readonly apiUrl: string;

  public constructor(private readonly options: SlackWebApiOptions) {
    this.apiUrl = (options.apiUrl ?? SLACK_API_URL).replace(/\/+$/, '');
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
    const response = await (this.options.fetch ?? fetch)(`${this.apiUrl}/${method}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await this.options.botToken()}`,
        'content-type': 'application/json; charset=utf-8',
      },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(SLACK_CALL_TIMEOUT_MILLISECONDS),
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw slackFailure(response.status === 429 ? 'ratelimited' : 'http_status');
    }
    const answer = await readJson(response);
    if (answer?.ok !== true) throw slackFailure(typeof answer?.error === 'string' ? answer.error : 'not_ok');
    return answer;
  }
}

/** The answer's JSON object, read up to the size bound; anything else is no answer of Slack's. */
async function readJson(response: Response): Promise<Record<string, unknown> | undefined> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES) throw slackFailure('response_too_large');
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const chunk = await reader?.read();
    if (chunk === undefined || chunk.done) break;
    length += chunk.value.byteLength;
    if (length > MAX_RESPONSE_BYTES) {
      await reader?.cancel().catch(() => undefined);
      throw slackFailure('response_too_large');
    }
    chunks.push(chunk.value);
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
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
