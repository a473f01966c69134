import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf } from '../support/api-answers.js';
import { eventually, useTestRuntime } from '../support/local-runtime.js';
import { startMcpTestServer } from '../support/mcp-test-server.js';
import { decide } from './approvers-support.js';
import { demoMachineClient, machineClientOf } from './external-runs-support.js';
import {
  callsOf,
  cardOfCall,
  connectClient,
  startGateway,
  textOf,
  useGateways,
} from './mcp-gateway-support.js';

describe('the MCP approval gateway when something fails', () => {
  const runtime = useTestRuntime();
  const fixture = useGateways(runtime, { hasty: { waitSeconds: 1, pollSeconds: 1 } });

  it('fails closed when the upstream’s listing fails: a read-only tool waits for approval, nothing reaches the upstream', async () => {
    // Prepare
    const before = callsOf(fixture.upstream, 'lookup').length;
    fixture.upstream.scriptListings(['fail']);

    // Act
    const result = await fixture.clients.hasty.callTool({
      name: 'lookup',
      arguments: { ticket: 'T-unlisted-1' },
    });
    const card = await cardOfCall(runtime, 'lookup', 'T-unlisted-1');

    // Assess
    expect(textOf(result)).toContain('Waiting for approval');
    expect(card.pendingTools[0]).toMatchObject({
      requiresApproval: true,
      effectUnconfirmed: TEXTS.effectUnconfirmed,
    });
    expect(callsOf(fixture.upstream, 'lookup')).toHaveLength(before);
  });

  it('fails closed when countersign cannot be reached: no upstream call, an error without secrets', async () => {
    // Prepare
    const client = demoMachineClient(runtime);
    const unreachable = await startGateway(runtime, fixture.upstream, {
      apiUrl: 'http://127.0.0.1:9',
      tokenUrl: 'http://127.0.0.1:9/oauth2/token',
    });
    const mcp = await connectClient(unreachable);

    // Act
    const result = await mcp.callTool({ name: 'create_ticket', arguments: { title: 'Nobody to ask' } });

    // Assess
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(TEXTS.mcpGatewayApprovalUnavailable);
    expect(textOf(result)).not.toContain(client.clientSecret);
    expect(
      callsOf(fixture.upstream, 'create_ticket').some((each) => JSON.stringify(each).includes('Nobody')),
    ).toBe(false);
    await mcp.close();
    await unreachable.stop();
  });

  it('refuses an upstream on a reserved host unless loopback is allowed for local development', async () => {
    // Act and assess
    for (const upstreamUrl of [
      'http://127.0.0.1:4000/mcp',
      'https://169.254.169.254/mcp',
      'https://[::ffff:a9fe:a9fe]/mcp',
      'https://0x7f.1/mcp',
      'http://mcp.example.com/mcp',
    ]) {
      await expect(
        startGateway(runtime, fixture.upstream, { upstreamUrl, allowLoopbackUpstream: false }),
      ).rejects.toThrow(/upstream: /);
    }
  });

  it('reports an approved call the upstream could not take as failed, and answers an error', async () => {
    // Prepare: an upstream that goes away while its call waits
    const doomed = await startMcpTestServer();
    const gateway = await startGateway(runtime, doomed, { waitSeconds: 20, pollSeconds: 1 });
    const mcp = await connectClient(gateway);
    const pending = mcp.callTool({ name: 'create_ticket', arguments: { title: 'Upstream gone' } });
    const card = await cardOfCall(runtime, 'create_ticket', 'Upstream gone');
    await doomed.stop();

    // Act
    await decide(runtime, card.runId, { digest: card.digest, decision: 'approve' });
    const result = await pending;

    // Assess
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(TEXTS.mcpGatewayUpstreamUnavailable('create_ticket'));
    const run = await eventually(async () => {
      const view = bodyOf(await machineClientOf(runtime).getExternalRun({ path: { id: card.runId } }));
      return view?.reports.length ? view : undefined;
    });
    expect(run.reports).toMatchObject([{ index: 0, outcome: 'failed', approved: true }]);
    await mcp.close();
    await gateway.stop();
  });

  it('never runs an approved call twice, even from a gateway that restarted', async () => {
    // Prepare: the call approved and run through one gateway
    const first = await fixture.clients.hasty.callTool({
      name: 'create_ticket',
      arguments: { title: 'Run once' },
    });
    const card = await cardOfCall(runtime, 'create_ticket', 'Run once');
    await decide(runtime, card.runId, { digest: card.digest, decision: 'approve' });
    const ran = await fixture.clients.hasty.callTool({
      name: 'create_ticket',
      arguments: { title: 'Run once' },
    });
    const restarted = await startGateway(runtime, fixture.upstream, { waitSeconds: 1, pollSeconds: 1 });
    const mcp = await connectClient(restarted);
    await eventually(async () => {
      const view = bodyOf(await machineClientOf(runtime).getExternalRun({ path: { id: card.runId } }));
      return view?.reports.length ? view : undefined;
    });

    // Act: a fresh gateway knows nothing of it; the same call reaches the same, reported run
    const again = await mcp.callTool({ name: 'create_ticket', arguments: { title: 'Run once' } });

    // Assess
    expect(textOf(first)).toContain('Waiting for approval');
    expect(textOf(ran)).toBe('Created ticket T-9 "Run once".');
    expect(again.isError).toBeFalsy();
    expect(textOf(again)).toBe(TEXTS.mcpGatewayAlreadyRun('create_ticket', card.runId, 'succeeded'));
    expect(
      callsOf(fixture.upstream, 'create_ticket').filter((each) => JSON.stringify(each).includes('Run once')),
    ).toHaveLength(1);
    await mcp.close();
    await restarted.stop();
  });

  it('stops waiting when the client goes away, so the call’s place is free and the run stays for the next call', async () => {
    // Prepare: a gateway with room for one waiting call
    const gateway = await startGateway(runtime, fixture.upstream, {
      waitSeconds: 20,
      pollSeconds: 1,
      maxWaitingCalls: 1,
    });
    const leaving = await connectClient(gateway);
    const staying = await connectClient(gateway);
    const first = leaving.callTool({ name: 'create_ticket', arguments: { title: 'Client gone' } });
    first.catch(() => undefined);
    const card = await cardOfCall(runtime, 'create_ticket', 'Client gone');

    // Act: the first client closes its connection; another write then finds the place free (it
    // waits on a card of its own, so this client stops listening after a few seconds)
    await leaving.close();
    const second = await eventually(async () => {
      try {
        const answer = await staying.callTool(
          { name: 'create_ticket', arguments: { title: 'After it left' } },
          undefined,
          { timeout: 3_000 },
        );
        return textOf(answer) === TEXTS.mcpGatewayBusy(1) ? undefined : textOf(answer);
      } catch {
        return 'waiting on its card';
      }
    }, 10_000);

    // Assess: the second waits on its own card; the first's run is still there, unanswered
    expect(second).toBe('waiting on its card');
    expect((await cardOfCall(runtime, 'create_ticket', 'After it left')).runId).not.toBe(card.runId);
    expect((await cardOfCall(runtime, 'create_ticket', 'Client gone')).runId).toBe(card.runId);
    expect(
      callsOf(fixture.upstream, 'create_ticket').some((each) => JSON.stringify(each).includes('gone')),
    ).toBe(false);
    await staying.close();
    await gateway.stop();
  }, 60_000);
});
