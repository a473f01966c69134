import { describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf } from '../support/api-answers.js';
import { eventually, useTestRuntime } from '../support/local-runtime.js';
import { decide } from './approvers-support.js';
import { machineClientOf } from './external-runs-support.js';
import {
  callsOf,
  cardOfCall,
  cardsOfCall,
  connectClient,
  startGateway,
  statusWithHost,
  textOf,
  useGateways,
} from './mcp-gateway-support.js';

describe('the MCP approval gateway', () => {
  const runtime = useTestRuntime();
  const fixture = useGateways(runtime, {
    patient: { waitSeconds: 20, pollSeconds: 2 },
    hasty: { waitSeconds: 2, pollSeconds: 1 },
    editing: { waitSeconds: 20, pollSeconds: 1, allowEdits: true },
  });

  it('offers the upstream’s tools under their names, marking only the read-only ones read-only', async () => {
    // Act
    const { tools } = await fixture.clients.patient.listTools();

    // Assess
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).toEqual([
      'countersign_approval_status',
      'create_ticket',
      'create_ticket__preview',
      'delete_ticket',
      'explode',
      'lookup',
    ]);
    expect(byName.lookup?.annotations?.readOnlyHint).toBe(true);
    expect(byName.create_ticket?.annotations?.readOnlyHint).toBeUndefined();
    expect(byName.lookup?.inputSchema).toMatchObject({
      type: 'object',
      properties: { ticket: { type: 'string' } },
    });
  });

  it('passes a read-only call through to the upstream with no card', async () => {
    // Act
    const result = await fixture.clients.patient.callTool({
      name: 'lookup',
      arguments: { ticket: 'T-read-1' },
    });

    // Assess
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('Ticket T-read-1: open, assigned to Ana.');
    expect(callsOf(fixture.upstream, 'lookup')).toContainEqual({
      tool: 'lookup',
      arguments: { ticket: 'T-read-1' },
    });
    expect(await cardsOfCall(runtime, 'T-read-1')).toEqual([]);
  });

  it('holds a write until an approver approves, then calls the upstream once and reports it', async () => {
    // Prepare: a client that asks for progress, and resets its timeout on it
    const progress: string[] = [];
    const pending = fixture.clients.patient.callTool(
      { name: 'create_ticket', arguments: { title: 'Printer on fire' } },
      undefined,
      {
        onprogress: (notification) => progress.push(notification.message ?? ''),
        resetTimeoutOnProgress: true,
      },
    );
    const card = await cardOfCall(runtime, 'create_ticket', 'Printer on fire');
    expect(callsOf(fixture.upstream, 'create_ticket')).toEqual([]);

    // Act
    bodyOf(await decide(runtime, card.runId, { digest: card.digest, decision: 'approve' }), 200);
    const result = await pending;

    // Assess: the upstream ran the approved call once, and the run records what ran
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('Created ticket T-9 "Printer on fire".');
    expect(progress[0]).toBe(TEXTS.mcpGatewayWaitingProgress(card.runId));
    expect(callsOf(fixture.upstream, 'create_ticket')).toEqual([
      { tool: 'create_ticket', arguments: { title: 'Printer on fire' } },
    ]);
    expect(card.pendingTools[0]).toMatchObject({
      requiresApproval: true,
      arguments: { title: 'Printer on fire' },
    });
    const run = await eventually(async () => {
      const view = bodyOf(await machineClientOf(runtime).getExternalRun({ path: { id: card.runId } }));
      return view?.reports.length ? view : undefined;
    });
    expect(run).toMatchObject({
      status: 'decided',
      reports: [{ index: 0, outcome: 'succeeded', approved: true }],
    });
  });

  it('runs the arguments an approver edited, once another approved them, and tells the client so', async () => {
    // Prepare
    const pending = fixture.clients.editing.callTool({
      name: 'create_ticket',
      arguments: { title: 'Pritner jammed' },
    });
    const first = await cardOfCall(runtime, 'create_ticket', 'Pritner jammed');

    // Act: the approver fixes the title; the edit is a fresh card another person approves
    bodyOf(
      await decide(runtime, first.runId, {
        digest: first.digest,
        decision: 'edit',
        edits: [{ index: 0, arguments: { title: 'Printer jammed' } }],
      }),
      200,
    );
    const fresh = await cardOfCall(runtime, 'create_ticket', 'Printer jammed');
    await decide(runtime, fresh.runId, { digest: fresh.digest, decision: 'approve' }, 'reviewer');
    const result = await pending;

    // Assess: the upstream got the approved arguments only, and the model reads that they changed
    expect(first.pendingTools[0].editable).toBe(true);
    expect(fresh.runId).toBe(first.runId);
    expect(
      callsOf(fixture.upstream, 'create_ticket').filter((each) => JSON.stringify(each).includes('jammed')),
    ).toEqual([{ tool: 'create_ticket', arguments: { title: 'Printer jammed' } }]);
    expect(result.content).toEqual([
      {
        type: 'text',
        text: TEXTS.mcpGatewayEdited(
          'create_ticket',
          'approver',
          JSON.stringify({ title: 'Printer jammed' }),
        ),
      },
      { type: 'text', text: 'Created ticket T-9 "Printer jammed".' },
    ]);
  });

  it('answers a rejection as an error with the approver’s reason, and never calls the upstream', async () => {
    // Prepare
    const pending = fixture.clients.patient.callTool({
      name: 'delete_ticket',
      arguments: { ticket: 'T-reject-1' },
    });
    const card = await cardOfCall(runtime, 'delete_ticket', 'T-reject-1');

    // Act
    await decide(runtime, card.runId, { digest: card.digest, decision: 'reject', reason: 'Not this one' });
    const result = await pending;

    // Assess: no hint upstream is an effect nobody confirmed, on the card as such
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(TEXTS.mcpGatewayRejected('delete_ticket', 'Not this one'));
    expect(card.pendingTools[0]).toMatchObject({ effectUnconfirmed: TEXTS.effectUnconfirmed });
    expect(callsOf(fixture.upstream, 'delete_ticket')).toEqual([]);
  });

  it('answers "waiting for approval" when the wait runs out, with progress, and the same call again reaches the same run', async () => {
    // Prepare
    const progress: string[] = [];
    const call = () =>
      fixture.clients.hasty.callTool(
        { name: 'create_ticket', arguments: { title: 'Slow approver' } },
        undefined,
        {
          onprogress: (notification) => progress.push(notification.message ?? ''),
        },
      );

    // Act: the first call's wait runs out
    const first = await call();
    const card = await cardOfCall(runtime, 'create_ticket', 'Slow approver');
    const second = await call();

    // Assess: a clear non-error result naming the run and its card; nothing ran
    const cardUrl = `${runtime.url}/inbox/runs/${encodeURIComponent(card.runId)}`;
    expect(first.isError).toBeFalsy();
    expect(textOf(first)).toBe(TEXTS.mcpGatewayWaiting('create_ticket', card.runId, cardUrl));
    expect(textOf(second)).toBe(textOf(first));
    expect(progress).toContain(TEXTS.mcpGatewayWaitingProgress(card.runId));
    expect(
      callsOf(fixture.upstream, 'create_ticket').filter((each) => JSON.stringify(each).includes('Slow')),
    ).toEqual([]);

    // Act: approved meanwhile, the retry gets the decision
    await decide(runtime, card.runId, { digest: card.digest, decision: 'approve' });
    const third = await call();

    // Assess: one upstream call, reported on the same run
    expect(textOf(third)).toBe('Created ticket T-9 "Slow approver".');
    const slowCalls = callsOf(fixture.upstream, 'create_ticket').filter((each) =>
      JSON.stringify(each).includes('Slow'),
    );
    expect(slowCalls).toHaveLength(1);
    const run = await eventually(async () => {
      const view = bodyOf(await machineClientOf(runtime).getExternalRun({ path: { id: card.runId } }));
      return view?.reports.length ? view : undefined;
    });
    expect(run.reports).toMatchObject([{ index: 0, outcome: 'succeeded', approved: true }]);

    // Act: once it ran, the same call is a new intent: it asks for a new approval, never reruns the old one
    const fourth = await call();

    // Assess
    const next = await cardOfCall(runtime, 'create_ticket', 'Slow approver');
    expect(next.runId).not.toBe(card.runId);
    expect(textOf(fourth)).toContain(next.runId);
    expect(
      callsOf(fixture.upstream, 'create_ticket').filter((each) => JSON.stringify(each).includes('Slow')),
    ).toHaveLength(1);
  });

  it('says how a waiting call stands through countersign_approval_status, never running it', async () => {
    // Prepare
    const client = fixture.clients.hasty;
    const status = async (runId: string) =>
      client.callTool({ name: 'countersign_approval_status', arguments: { runId } });
    await client.callTool({ name: 'create_ticket', arguments: { title: 'Status check' } });
    const card = await cardOfCall(runtime, 'create_ticket', 'Status check');
    const cardUrl = `${runtime.url}/inbox/runs/${encodeURIComponent(card.runId)}`;

    // Act
    const pending = await status(card.runId);
    await decide(runtime, card.runId, { digest: card.digest, decision: 'approve' });
    const approved = await eventually(async () => {
      const answer = await status(card.runId);
      return textOf(answer).includes('is approved') ? answer : undefined;
    });
    const ranOnlyOnRetry = callsOf(fixture.upstream, 'create_ticket').filter((each) =>
      JSON.stringify(each).includes('Status check'),
    );
    await client.callTool({ name: 'create_ticket', arguments: { title: 'Status check' } });
    const ran = await eventually(async () => {
      const answer = await status(card.runId);
      return textOf(answer).includes('and ran (') ? answer : undefined;
    });
    const unknown = await status('no-such-run');
    const hostile = await status('../runs/x');

    // Assess
    expect(textOf(pending)).toBe(TEXTS.mcpGatewayStatusPending(card.runId, cardUrl));
    expect(approved.isError).toBeFalsy();
    expect(textOf(approved)).toBe(TEXTS.mcpGatewayStatusApproved(card.runId));
    expect(ranOnlyOnRetry).toEqual([]);
    expect(textOf(ran)).toBe(TEXTS.mcpGatewayStatusRan(card.runId, 'succeeded'));
    expect(unknown).toMatchObject({ isError: true });
    expect(textOf(unknown)).toBe(TEXTS.mcpGatewayStatusNotFound('no-such-run'));
    expect(textOf(hostile)).toBe(TEXTS.mcpGatewayStatusNotFound('../runs/x'));
  });

  it('answers a tool list the upstream could not give with an error', async () => {
    // Prepare
    fixture.upstream.scriptListings(['fail']);

    // Act
    const listing = fixture.clients.patient.listTools();

    // Assess
    await expect(listing).rejects.toThrow(TEXTS.mcpGatewayListingFailed);
  });

  it('refuses hostile names and oversized arguments before any card or upstream call', async () => {
    // Prepare
    const callsBefore = fixture.upstream.calls.length;

    // Act
    const unknown = await fixture.clients.patient.callTool({
      name: 'create_ticket\u202e',
      arguments: { title: 'x' },
    });
    const traversal = await fixture.clients.patient.callTool({ name: '../admin', arguments: {} });
    const huge = await fixture.clients.patient.callTool({
      name: 'create_ticket',
      arguments: { title: 'H'.repeat(70_000) },
    });

    // Assess
    expect(unknown).toMatchObject({ isError: true });
    expect(textOf(unknown)).toBe(TEXTS.mcpGatewayUnknownTool('create_ticket\u202e'));
    expect(textOf(traversal)).toBe(TEXTS.mcpGatewayUnknownTool('../admin'));
    expect(textOf(huge)).toBe(TEXTS.mcpGatewayArgumentsTooLarge(64 * 1024));
    expect(fixture.upstream.calls.length).toBe(callsBefore);
    expect(await cardsOfCall(runtime, 'HHHHHHHH')).toEqual([]);
  });

  it('answers a body over its bound with 413 and a request for another host with 403', async () => {
    // Act
    const tooLarge = await fetch(fixture.gateways.patient.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1_100_000) } }),
    });
    const wrongPath = await fetch(fixture.gateways.patient.url.replace('/mcp', '/other'), {
      method: 'POST',
      body: '{}',
    });
    const rebound = await statusWithHost(fixture.gateways.patient.url, 'attacker.example');
    const port = new URL(fixture.gateways.patient.url).port;
    const byName = await statusWithHost(fixture.gateways.patient.url, `LocalHost:${port}`);
    const named = await startGateway(runtime, fixture.upstream, { allowedHosts: ['Gateway.Internal:8788'] });
    const byListedName = await statusWithHost(named.url, 'gateway.internal:8788');
    await named.stop();

    // Assess: a Host the gateway answers to (any case) reaches the transport
    expect(tooLarge.status).toBe(413);
    expect(wrongPath.status).toBe(404);
    expect(rebound).toBe(403);
    expect(byName).not.toBe(403);
    expect(byListedName).not.toBe(403);
  });

  it('asks every client for its bearer token when given one, and refuses a network address without one', async () => {
    // Arrange
    const token = 'gateway-token-0123456789abcdefghijklmnopqrstuv';
    const guarded = await startGateway(runtime, fixture.upstream, { clientToken: token });
    const post = (authorization?: string) =>
      fetch(guarded.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization === undefined ? {} : { authorization }),
        },
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      });

    try {
      // Act
      const missing = await post();
      const wrong = await post(`Bearer ${token.slice(0, -1)}x`);
      const otherScheme = await post(`Basic ${token}`);
      const client = await connectClient(guarded, token);
      const listed = await client.listTools();
      await client.close();
      const exposed = startGateway(runtime, fixture.upstream, { host: '0.0.0.0' });
      const shortToken = startGateway(runtime, fixture.upstream, { clientToken: 'short' });

      // Assess: nothing reaches the transport (or the upstream) without the token
      for (const answer of [missing, wrong, otherScheme]) {
        expect(answer.status).toBe(401);
        expect(answer.headers.get('www-authenticate')).toBe('Bearer');
      }
      expect(listed.tools.map((tool) => tool.name)).toContain('lookup');
      await expect(exposed).rejects.toThrow('needs a client token');
      await expect(shortToken).rejects.toThrow('at least 32 printable ASCII characters');
    } finally {
      await guarded.stop();
    }
  });
});
