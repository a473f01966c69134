import type { WebhookPoster, WebhookPostOutcome } from '../../core/external-runs/webhook-delivery.js';
import { checkWebhookUrl, type WebhookUrlPolicy } from '../../core/external-runs/webhook-url.js';
import { callOutbound } from './outbound-fetch.js';

/** How long one delivery may take, connecting to the last byte of the answer. */
export const WEBHOOK_DEADLINE_MILLISECONDS = 10_000;
/** A receiver's answer is not read for anything but its status: a little is enough. */
const WEBHOOK_ANSWER_MAX_BYTES = 64 * 1024;

/**
 * Posts a webhook through the outbound-call policy: no redirect (a signed body goes to the URL
 * the caller gave and nowhere else), the URL checked again by the webhook policy before the
 * request goes out, a bounded answer and a ten-second deadline.
 *
 * @example
 * const poster = new OutboundWebhookPoster({ policy: DEPLOYED_WEBHOOK_URL_POLICY });
 * await poster.post({ url: new URL('https://agent.example.com/hooks'), headers, body });
 */
export class OutboundWebhookPoster implements WebhookPoster {
  public constructor(
    private readonly options: { readonly policy: WebhookUrlPolicy; readonly fetch?: typeof fetch },
  ) {}

  public async post(request: {
    url: URL;
    headers: Record<string, string>;
    body: string;
  }): Promise<WebhookPostOutcome> {
    const answer = await callOutbound(
      {
        url: request.url,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.timeout(WEBHOOK_DEADLINE_MILLISECONDS),
      },
      {
        redirects: 'none',
        maxResponseBytes: WEBHOOK_ANSWER_MAX_BYTES,
        allowsUrl: (url) => checkWebhookUrl(url.href, this.options.policy).kind === 'allowed',
      },
      this.options.fetch ? { fetch: this.options.fetch } : {},
    );
    return answer.kind === 'answered'
      ? { kind: 'answered', status: answer.status }
      : { kind: 'unreachable', reason: answer.reason };
  }
}
