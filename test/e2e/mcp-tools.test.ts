import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';

import {
  type ResponseJson,
  settle,
  startRunAndSettle,
  type TestRuntime,
  useTestRuntime,
} from '../support/local-runtime.js';
import {
  type ListingAnswer,
  MCP_SECRET_ERROR_TEXT,
  MCP_TEST_TOKEN,
  type McpTestServer,
  startMcpTestServer,
} from '../support/mcp-test-server.js';
import { decide } from './approvers-support.js';

const SECRET_VARIABLE = 'COUNTERSIGN_MCP_SECRET_TICKETS_TOKEN';

/** A configuration offering the model one MCP server's tools. */
function mcpConfiguration<Server extends object>(configurationId: string, server: Server) {
  return {
    configurationId,
    label: `MCP ${configurationId}`,
    provider: 'scripted' as const,
    model: 'scripted',
    allowedTools: ['get_page'],
    mcpServers: [{ authSecret: 'tickets-token', timeoutMs: 5_000, ...server }],
  };
}

function putMcpConfiguration(
  runtime: TestRuntime,
  configurationId: string,
  server: { name: string; url: string; approversMayReadPreviews?: boolean },
) {
  return runtime
    .client('admin')
    .putConfiguration({ path: { id: configurationId }, body: mcpConfiguration(configurationId, server) });
}

async function inboxCard(runtime: TestRuntime, runId: string): Promise<ResponseJson> {
  const inbox = await runtime.client('approver').listInbox({ query: { limit: 100 } });
  expect(inbox.status).toBe(200);
  return bodyOf(inbox).cards.find((card: ResponseJson) => card.runId === runId);
}

function callInstruction(tool: string, args: Record<string, unknown>): string {
  return `call ${tool} with ${JSON.stringify(args)}`;
}

describe('tools over MCP, against a real MCP server on loopback, through the local runtime', () => {
  const runtime = useTestRuntime();
  let tickets: McpTestServer;
  let vanishing: McpTestServer;

  beforeAll(async () => {
    process.env[SECRET_VARIABLE] = MCP_TEST_TOKEN;
    tickets = await startMcpTestServer();
    vanishing = await startMcpTestServer();
    expect(
      (await putMcpConfiguration(runtime, 'mcp-tickets', { name: 'tickets', url: tickets.url })).status,
    ).toBe(200);
    const open = await putMcpConfiguration(runtime, 'mcp-tickets-readable', {
      name: 'tickets',
      url: tickets.url,
      approversMayReadPreviews: true,
    });
    expect(open.status).toBe(200);
    // Tool-level authority covers MCP tools by their namespaced names, like any tool.
    const approver = await runtime.dependencies.users.getUser('approver');
    if (!approver || approver.toolAccess === '*') throw new Error('the demo approver changed');
    await runtime.dependencies.users.putUser({
      ...approver,
      toolAccess: [...approver.toolAccess, 'tickets__create_ticket', 'vanishing__create_ticket'],
    });
    const gone = await putMcpConfiguration(runtime, 'mcp-vanishing', {
      name: 'vanishing',
      url: vanishing.url,
    });
    expect(gone.status).toBe(200);
  });

  afterAll(async () => {
    delete process.env[SECRET_VARIABLE];
    await tickets.stop();
    await vanishing.stop();
  });

  it('refuses a configuration with an unknown key inside an MCP server, naming its path', async () => {
    // Act
    // raw: an unknown key inside an MCP server, on purpose
    const response = await runtime.sendRaw('PUT', '/admin/configurations/mcp-misspelt', {
      as: 'admin',
      body: mcpConfiguration('mcp-misspelt', {
        name: 'tickets',
        url: tickets.url,
        approversMayReadPreview: true,
      }),
    });

    // Assess
    expect(response.status).toBe(400);
    expect(response.text).toContain('mcpServers');
    expect(response.text).toContain('approversMayReadPreview');
  });

  it('offers the listed tools namespaced, and runs a read-only tool without a card', async () => {
    // Act
    const { view } = await startRunAndSettle(runtime, callInstruction('tickets__lookup', { ticket: 'T-1' }), {
      configurationId: 'mcp-tickets',
    });

    // Assess
    expect(view.status).toBe('completed');
    expect(view.transcript.finalAnswer).toContain('Ticket T-1: open, assigned to Ana.');
    expect(tickets.calls).toContainEqual({ tool: 'lookup', arguments: { ticket: 'T-1' } });
  });

  it('pauses a tool that is not read-only (even with destructiveHint false) on a card with its preview, withheld by default', async () => {
    // Prepare
    const before = tickets.calls.length;

    // Act
    const { runId, view } = await startRunAndSettle(
      runtime,
      callInstruction('tickets__create_ticket', { title: 'Printer jam' }),
      { configurationId: 'mcp-tickets' },
    );

    // Assess: waiting, the write not made, its companion preview captured but not readable.
    expect(view.status).toBe('waiting');
    expect(tickets.calls.slice(before).map((call) => call.tool)).toEqual(['create_ticket__preview']);
    const card = await inboxCard(runtime, runId);
    expect(card.pendingTools[0]).toMatchObject({
      tool: 'tickets__create_ticket',
      requiresApproval: true,
      willRun: true,
      preview: { status: 'withheld', message: TEXTS.previewWithheld },
    });
    expect(JSON.stringify(card)).not.toContain('queue OPS');

    // Act: approve
    const decision = await decide(runtime, runId, { digest: view.digest, decision: 'approve' });
    const after = await settle(runtime, runId, 'editor', view.turn);

    // Assess: the write ran once, after the approval.
    expect(decision.status).toBe(200);
    expect(after.status).toBe('completed');
    expect(after.transcript.finalAnswer).toContain('Created ticket T-9 "Printer jam".');
    expect(tickets.calls.filter((call) => call.tool === 'create_ticket')).toHaveLength(1);
  });

  it('shows the preview lines, hidden characters marked, when the configuration lets approvers read them', async () => {
    // Act
    const { runId, view } = await startRunAndSettle(
      runtime,
      callInstruction('tickets__create_ticket', { title: 'Printer\u200b jam' }),
      { configurationId: 'mcp-tickets-readable' },
    );

    // Assess
    expect(view.status).toBe('waiting');
    const card = await inboxCard(runtime, runId);
    expect(card.pendingTools[0].preview.status).toBe('shown');
    expect(card.pendingTools[0].preview.lines[0]).toBe('Would create a ticket in queue OPS.');
    expect(card.pendingTools[0].preview.lines[1]).toContain('U+200B');
    expect(card.pendingTools[0].preview.lines[1]).not.toContain('\u200b');
  });

  it('pauses a tool without annotations and without a companion on a card that says there is no preview', async () => {
    // Act
    const { runId, view } = await startRunAndSettle(
      runtime,
      callInstruction('tickets__delete_ticket', { ticket: 'T-1' }),
      { configurationId: 'mcp-tickets' },
    );

    // Assess
    expect(view.status).toBe('waiting');
    const card = await inboxCard(runtime, runId);
    expect(card.pendingTools[0]).toMatchObject({
      requiresApproval: true,
      preview: { status: 'none', message: 'No preview — you are deciding without one' },
    });
    expect(tickets.calls.some((call) => call.tool === 'delete_ticket')).toBe(false);
  });

  it.each<[string, ListingAnswer]>([
    ['the listing fails at the pause', 'fail'],
    ['the tool claims readOnlyHint at the pause', { readOnlyHints: { create_ticket: true } }],
  ])(
    'guards a write as unconfirmed when %s: refused to an approver without tool access, run once one with it approves',
    async (_case, atPause) => {
      // Prepare: the model turn lists the server as usual; the pause gets `atPause`.
      const before = tickets.calls.length;
      tickets.scriptListings(['as-listed', atPause]);

      // Act
      const { runId, view } = await startRunAndSettle(
        runtime,
        callInstruction('tickets__create_ticket', { title: 'Unconfirmed' }),
        { configurationId: 'mcp-tickets' },
      );
      const card = await inboxCard(runtime, runId);
      // The demo reviewer's toolAccess names the page writer only.
      const refused = await decide(runtime, runId, { digest: view.digest, decision: 'approve' }, 'reviewer');
      const writesAfterRefusal = tickets.calls.slice(before).filter((call) => call.tool === 'create_ticket');
      const approved = await decide(runtime, runId, { digest: view.digest, decision: 'approve' });
      const after = await settle(runtime, runId, 'editor', view.turn);

      // Assess
      expect(view.status).toBe('waiting');
      expect(card.pendingTools[0]).toMatchObject({
        tool: 'tickets__create_ticket',
        requiresApproval: true,
        effectUnconfirmed: TEXTS.effectUnconfirmed,
      });
      expect(refused.status).toBe(403);
      expect(refusalOf(refused).error.message).toBe(TEXTS.gateToolRefused('tickets__create_ticket'));
      expect(writesAfterRefusal).toEqual([]);
      expect(approved.status).toBe(200);
      expect(after.status).toBe('completed');
      expect(tickets.calls.slice(before).filter((call) => call.tool === 'create_ticket')).toEqual([
        { tool: 'create_ticket', arguments: { title: 'Unconfirmed' } },
      ]);
    },
  );

  it('gives the model an error result for a tool that throws, and keeps the text out of the logs', async () => {
    // Act
    const { view } = await startRunAndSettle(runtime, callInstruction('tickets__explode', {}), {
      configurationId: 'mcp-tickets',
    });

    // Assess
    expect(view.status).toBe('completed');
    expect(view.transcript.finalAnswer).toContain('Not applied: tickets__explode failed');
    expect(runtime.logLines.join('\n')).not.toContain(MCP_SECRET_ERROR_TEXT);
    expect(runtime.logLines.join('\n')).not.toContain(MCP_TEST_TOKEN);
  });

  it('fails a run whose server disappeared while it waited with a reason naming the server, never writing, and fails new runs the same way', async () => {
    // Prepare: a write waits for its approval, then the server goes away.
    const { runId, view } = await startRunAndSettle(
      runtime,
      callInstruction('vanishing__create_ticket', { title: 'Lost' }),
      { configurationId: 'mcp-vanishing' },
    );
    expect(view.status).toBe('waiting');
    await vanishing.stop();

    // Act
    const decision = await decide(runtime, runId, { digest: view.digest, decision: 'approve' });
    const after = await settle(runtime, runId, 'editor', view.turn);
    const next = await startRunAndSettle(runtime, callInstruction('vanishing__lookup', { ticket: 'T-2' }), {
      configurationId: 'mcp-vanishing',
    });

    // Assess: the approved call got an error result (never reaching a server), and the next
    // model turn, which cannot list the server, failed the run saying why; so did a new run.
    expect(decision.status).toBe(200);
    expect(after.status).toBe('failed');
    expect(after.failureReason).toBe(TEXTS.mcpServerUnreachable('vanishing'));
    expect(after.transcript.toolCalls).toBe(1);
    expect(vanishing.calls.some((call) => call.tool === 'create_ticket')).toBe(false);
    expect(next.view.status).toBe('failed');
    expect(next.view.failureReason).toBe(TEXTS.mcpServerUnreachable('vanishing'));
  });
});
