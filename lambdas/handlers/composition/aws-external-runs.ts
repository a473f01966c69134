import { DynamoExternalRunStore } from '../../adapters/dynamo/dynamo-external-run-store.js';
import { OutboundWebhookPoster } from '../../adapters/outbound/outbound-webhook-poster.js';
import { SecretsManagerWebhookSecrets } from '../../adapters/secrets-manager-webhook-secrets.js';
import type { ExternalRunStore } from '../../core/external-runs/external-run-store.js';
import type { WebhookPoster, WebhookSecrets } from '../../core/external-runs/webhook-delivery.js';
import { DEPLOYED_WEBHOOK_URL_POLICY } from '../../core/external-runs/webhook-url.js';
import { lambdaEnvironment } from '../config.js';
import { awsRunStoreOptions } from './aws-base-dependencies.js';

let store: ExternalRunStore | undefined;
let webhooks: { webhookSecrets: WebhookSecrets; webhookPoster: WebhookPoster } | undefined;

/**
 * The client keys and execution reports of external runs, in the run table. They live as long
 * as a run can: its approval window, then the ended-run retention.
 */
export function awsExternalRuns(): ExternalRunStore {
  if (store) return store;
  const { client, tableName } = awsRunStoreOptions();
  const environment = lambdaEnvironment();
  store = new DynamoExternalRunStore({
    client,
    tableName,
    retentionSeconds:
      environment.COUNTERSIGN_APPROVAL_TIMEOUT_SECONDS + environment.COUNTERSIGN_ENDED_RUN_RETENTION_SECONDS,
  });
  return store;
}

/** NotifyCaller's webhook signing secrets (Secrets Manager) and its poster (the outbound policy). */
export function awsWebhooks(): { webhookSecrets: WebhookSecrets; webhookPoster: WebhookPoster } {
  webhooks ??= {
    webhookSecrets: new SecretsManagerWebhookSecrets(lambdaEnvironment().COUNTERSIGN_WEBHOOK_SECRETS),
    webhookPoster: new OutboundWebhookPoster({ policy: DEPLOYED_WEBHOOK_URL_POLICY }),
  };
  return webhooks;
}
