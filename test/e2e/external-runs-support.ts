import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { clientCredentialsTokens } from '../../lambdas/agents/client-credentials.js';
import { type ApiClient, createApiClient } from '../../lambdas/contract/api-client.js';
import type { EmbeddedRuntime } from '../../lambdas/local/embedded-runtime.js';
import { DEMO_MACHINE_CLIENT_ID } from '../../lambdas/local/local-machine-clients.js';
import { bodyOf, type RequestBody } from '../support/api-answers.js';
import { eventually, type ResponseJson, type TestRuntime } from '../support/local-runtime.js';
import { createValidatingFetch } from '../support/openapi-response-validator.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** The demo agent's client as the local token endpoint knows it (id and secrets). */
export function demoMachineClient(runtime: Pick<EmbeddedRuntime, 'machine'>) {
  const client = runtime.machine.clients.list().find((each) => each.clientId === DEMO_MACHINE_CLIENT_ID);
  if (!client) throw new Error('The local runtime has no demo machine client.');
  return client;
}

/**
 * The typed API client of the demo agent: its token from the local token endpoint by the
 * client-credentials grant (oauth4webapi), every answer checked against the OpenAPI document.
 */
export function machineClientOf(runtime: TestRuntime): ApiClient {
  const client = demoMachineClient(runtime);
  return createApiClient({
    baseUrl: runtime.url,
    token: clientCredentialsTokens({
      tokenUrl: runtime.machine.tokenUrl,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
    }),
    fetch: createValidatingFetch(),
  });
}

export type ExternalTurn = RequestBody<'submitExternalRun'>;

/**
 * A turn of the demo agent under `demo-external`: a read (no approval needed), a write with the
 * caller's preview, and a tool whose effect the agent does not know.
 */
export function demoTurn(overrides: Partial<ExternalTurn> = {}): ExternalTurn {
  return {
    configurationId: 'demo-external',
    clientKey: randomUUID(),
    summary: 'Invoice ACME for the March consulting days.',
    tools: [
      { name: 'lookup_customer', effect: 'read' },
      { name: 'send_invoice', effect: 'write' },
      { name: 'notify_sales', effect: 'unknown' },
    ],
    calls: [
      { tool: 'lookup_customer', arguments: { customer: 'ACME' } },
      {
        tool: 'send_invoice',
        callId: 'call_invoice',
        arguments: { customer: 'ACME', amountCents: 120_000, currency: 'EUR' },
        preview: ['Invoice INV-7 to ACME: 1,200.00 EUR', 'Replaces: no invoice for March yet'],
      },
      { tool: 'notify_sales', arguments: { channel: '#sales', text: 'ACME invoiced' } },
    ],
    ...overrides,
  };
}

/** The run's card as the demo approver reads it in the inbox, once the run waits. */
export async function inboxCardOf(
  runtime: TestRuntime,
  runId: string,
  as = 'approver',
): Promise<ResponseJson> {
  return eventually(async () => {
    const inbox: ResponseJson = (await runtime.client(as).listInbox({ query: { limit: 100 } })).body;
    return (inbox?.cards ?? []).find((card: ResponseJson) => card.runId === runId);
  });
}

/**
 * A webhook receiver for the tests of one describe block: started before them, stopped after.
 * Read `receiver.current` inside a test.
 */
export function useWebhookReceiver(): { readonly current: WebhookReceiver } {
  let receiver: WebhookReceiver | undefined;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.stop();
  });
  return {
    get current(): WebhookReceiver {
      if (!receiver) throw new Error('The webhook receiver is not started yet.');
      return receiver;
    },
  };
}

/** Submits `turn` as the demo agent and waits until its card is in the demo approver's inbox. */
export async function submitToCard(
  runtime: TestRuntime,
  turn: ExternalTurn,
): Promise<{ runId: string; card: ResponseJson }> {
  const { runId } = bodyOf(await machineClientOf(runtime).submitExternalRun({ body: turn }), 202);
  return { runId, card: await inboxCardOf(runtime, runId) };
}
