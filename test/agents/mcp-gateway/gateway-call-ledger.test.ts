import { describe, expect, it } from 'vitest';
import type { GatewayToolResult } from '../../../lambdas/agents/mcp-gateway/gateway-call.js';
import { GatewayCallLedger } from '../../../lambdas/agents/mcp-gateway/gateway-call-ledger.js';

const answer = (text: string): GatewayToolResult => ({ content: [{ type: 'text', text }] });

describe('the gateway’s call ledger', () => {
  it('joins the same call made again while it waits: one piece of work, one answer', async () => {
    // Prepare
    const ledger = new GatewayCallLedger(4);
    const keys: string[] = [];
    let release: (result: GatewayToolResult) => void = () => undefined;
    const work = (clientKey: string) => {
      keys.push(clientKey);
      return new Promise<GatewayToolResult>((resolve) => {
        release = resolve;
      });
    };

    // Act
    const first = ledger.once('identity-1', work);
    const second = ledger.once('identity-1', work);
    release(answer('ran once'));

    // Assess
    expect(await first).toEqual(answer('ran once'));
    expect(await second).toEqual(answer('ran once'));
    expect(keys).toEqual(['mcp-gateway-identity-1-0']);
  });

  it('gives a settled call a new client key, and refuses a call beyond the waiting bound', async () => {
    // Prepare
    const ledger = new GatewayCallLedger(1);
    const keys: string[] = [];
    const never = (clientKey: string) => {
      keys.push(clientKey);
      return new Promise<GatewayToolResult>(() => undefined);
    };
    await ledger.once('identity-2', async (clientKey) => {
      keys.push(clientKey);
      return answer('done');
    });
    ledger.settle('identity-2');

    // Act
    void ledger.once('identity-2', never);
    const busy = await ledger.once('identity-3', never);

    // Assess
    expect(keys).toEqual(['mcp-gateway-identity-2-0', 'mcp-gateway-identity-2-1']);
    expect(busy).toBe('busy');
  });
});
