import { isLoopbackHost, isReservedHost } from '../tools/mcp/reserved-hosts.js';

/**
 * Where an external run's answer may be posted. Deployed: https to a host that is not loopback,
 * link-local or unspecified in any spelling (`reserved-hosts.ts`: the Lambda runtime API and the
 * metadata services live there). Locally (`npm start`, tests) a loopback receiver over http too.
 */
export interface WebhookUrlPolicy {
  readonly allowLoopback: boolean;
}

/** Deployed: no loopback, https only. */
export const DEPLOYED_WEBHOOK_URL_POLICY: WebhookUrlPolicy = { allowLoopback: false };

export type WebhookUrlProblem = 'not-a-url' | 'not-https' | 'credentials' | 'reserved-host';

export type WebhookUrlVerdict =
  | { kind: 'allowed'; url: URL }
  | { kind: 'refused'; problem: WebhookUrlProblem };

/**
 * Checks a webhook URL when a turn is submitted and again before each delivery.
 *
 * @example
 * checkWebhookUrl('https://agent.example.com/hooks/countersign', DEPLOYED_WEBHOOK_URL_POLICY).kind; // 'allowed'
 * checkWebhookUrl('https://169.254.169.254/', DEPLOYED_WEBHOOK_URL_POLICY); // { kind: 'refused', problem: 'reserved-host' }
 */
export function checkWebhookUrl(url: string, policy: WebhookUrlPolicy): WebhookUrlVerdict {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { kind: 'refused', problem: 'not-a-url' };
  }
  if (parsed.username !== '' || parsed.password !== '') return { kind: 'refused', problem: 'credentials' };
  if (policy.allowLoopback && isLoopbackHost(parsed.hostname) && parsed.protocol === 'http:') {
    return { kind: 'allowed', url: parsed };
  }
  if (parsed.protocol !== 'https:') return { kind: 'refused', problem: 'not-https' };
  if (isReservedHost(parsed.hostname) && !(policy.allowLoopback && isLoopbackHost(parsed.hostname))) {
    return { kind: 'refused', problem: 'reserved-host' };
  }
  return { kind: 'allowed', url: parsed };
}
