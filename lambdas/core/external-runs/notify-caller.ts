import { CountersignError } from '../errors.js';
import type { RunDependencies } from '../run-dependencies.js';
import { loadRun, unsealRunState } from '../runs/load-run.js';
import { buildExternalRunView, type ExternalAnswerDependencies } from './external-answer.js';
import type { WebhookPoster, WebhookSecrets } from './webhook-delivery.js';
import { signWebhook, WEBHOOK_SIGNATURE_HEADER } from './webhook-signature.js';
import { checkWebhookUrl, DEPLOYED_WEBHOOK_URL_POLICY } from './webhook-url.js';

/** The header that names the run a delivery is about: a receiver's idempotency key (a retry repeats it). */
export const WEBHOOK_DELIVERY_HEADER = 'countersign-delivery';
/** The `type` of the webhook body: the answer of an external run, decided or expired. */
export const EXTERNAL_RUN_ANSWERED_TYPE = 'external_run.answered';

export type NotifyCallerDependencies = ExternalAnswerDependencies &
  Pick<RunDependencies, 'clock' | 'settings'> & {
    webhookSecrets?: WebhookSecrets;
    webhookPoster?: WebhookPoster;
  };

/** `delivered`: a 2xx; `refused`: the receiver or the policy refused for good (no retry). */
export type NotifyCallerOutcome =
  | { kind: 'no-webhook' }
  | { kind: 'delivered'; status: number }
  | { kind: 'refused'; why: 'status' | 'url' | 'no-secret' };

/**
 * The step that posts an external run's answer to the caller's webhook (`NotifyCaller`), signed
 * with the caller's secret (`webhook-signature.ts`) over the exact body sent, through the
 * outbound-call policy. A 2xx delivers; a 408, a 429, a 5xx or no answer throws
 * `countersign.webhook-failed`, which the workflow retries with backoff; any other answer, a URL
 * the policy now refuses or a client without a secret is given up at once (logged and counted).
 * The body is the same answer GET /external-runs/{id} gives, so a receiver may also just poll.
 */
export async function notifyCaller(
  dependencies: NotifyCallerDependencies,
  input: { runId: string },
): Promise<NotifyCallerOutcome> {
  const run = await loadRun(dependencies, input.runId);
  if (run.record.kind !== 'external') return { kind: 'no-webhook' };
  const state = await unsealRunState(dependencies, run);
  const url = state.external?.webhookUrl;
  if (url === undefined) return { kind: 'no-webhook' };
  const refused = (why: 'status' | 'url' | 'no-secret', fields: Record<string, unknown> = {}) => {
    dependencies.metrics.count('WebhookDeliveryFailures', 1, { reason: why });
    dependencies.logger.warn('webhook given up', { runId: input.runId, why, ...fields });
    return { kind: 'refused', why } as const;
  };
  const verdict = checkWebhookUrl(url, dependencies.settings.webhookUrlPolicy ?? DEPLOYED_WEBHOOK_URL_POLICY);
  if (verdict.kind === 'refused') return refused('url');
  const secret = await dependencies.webhookSecrets?.secretOf(run.record.owner);
  if (secret === undefined || dependencies.webhookPoster === undefined) return refused('no-secret');

  const view = await buildExternalRunView(dependencies, run.record);
  const body = JSON.stringify({ type: EXTERNAL_RUN_ANSWERED_TYPE, run: view });
  const timestampSeconds = Math.floor(dependencies.clock.now().getTime() / 1000);
  const outcome = await dependencies.webhookPoster.post({
    url: verdict.url,
    headers: {
      'content-type': 'application/json',
      [WEBHOOK_SIGNATURE_HEADER]: signWebhook({ secret, body, timestampSeconds }),
      [WEBHOOK_DELIVERY_HEADER]: input.runId,
    },
    body,
  });
  if (outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300) {
    dependencies.metrics.count('WebhookDeliveries');
    dependencies.logger.info('webhook delivered', { runId: input.runId, status: outcome.status });
    return { kind: 'delivered', status: outcome.status };
  }
  if (outcome.kind === 'answered' && !isRetried(outcome.status)) {
    return refused('status', { status: outcome.status });
  }
  dependencies.metrics.count('WebhookDeliveryFailures', 1, { reason: 'retried' });
  dependencies.logger.warn('webhook not delivered; retried', {
    runId: input.runId,
    ...(outcome.kind === 'answered' ? { status: outcome.status } : { reason: outcome.reason }),
  });
  throw new CountersignError('webhook-failed', 'The webhook was not delivered.');
}

/** What a later attempt may change: a timeout, throttling, a server error. */
function isRetried(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
