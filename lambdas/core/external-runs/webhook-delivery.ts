/**
 * Port: the signing secrets of the agents' webhooks, one per machine client (Secrets Manager
 * deployed; the local runtime's own). `undefined` when the client has none: its runs answer by
 * long-poll and the event only.
 */
export interface WebhookSecrets {
  secretOf(clientId: string): Promise<string | undefined>;
}

/** What posting one delivery came to. `unreachable` names the outbound policy's reason. */
export type WebhookPostOutcome =
  | { kind: 'answered'; status: number }
  | { kind: 'unreachable'; reason: string };

/**
 * Port: posts one signed delivery through the outbound-call policy (no redirect, a bounded
 * answer, a deadline) to a URL the webhook policy allows, checked again before it goes out.
 */
export interface WebhookPoster {
  post(request: { url: URL; headers: Record<string, string>; body: string }): Promise<WebhookPostOutcome>;
}
