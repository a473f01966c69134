import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { parseApprovalCard } from '../../lambdas/core/approvals/approval-card.js';
import { readCardShown } from '../../lambdas/core/approvals/decision-record.js';
import { sealJson, unsealJson } from '../../lambdas/core/sealed-json.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { defineTool, type Tool } from '../../lambdas/core/tools/tool.js';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import {
  apiClientWithToken,
  type ResponseJson,
  settle,
  startRunAndSettle,
  type TestRuntime,
  useTestRuntime,
} from '../support/local-runtime.js';
import { decide, signTokenWithRuntimeKey } from './approvers-support.js';

/** A read tool a deployment asks a human about: it requires approval, and it writes nothing. */
const approvalRead: Tool = defineTool({
  name: 'export_audit_log',
  description: 'Reads the audit log out; needs approval.',
  effect: 'read',
  requiresApproval: true,
  input: z.object({}),
  execute: async () => ({ content: 'exported', isError: false }),
}) as Tool;

async function inboxCard(runtime: TestRuntime, runId: string, as = 'approver'): Promise<ResponseJson> {
  const inbox = await runtime.client(as).listInbox({ query: { limit: 100 } });
  expect(inbox.status).toBe(200);
  return bodyOf(inbox).cards.find((card: ResponseJson) => card.runId === runId);
}

async function inboxHtmlOf(runtime: TestRuntime, runId: string): Promise<string> {
  const html = (
    await runtime.client('approver').listInbox({ query: { limit: 100 }, headers: { accept: 'text/html' } })
  ).text;
  const start = html.indexOf(`data-run-id="${runId}"`);
  expect(start).toBeGreaterThan(-1);
  return html.slice(start, html.indexOf('</article>', start));
}

/**
 * Re-seals a waiting run's card as a pause would have written it for other calls: the model
 * here only proposes the built-in tools, so a call it cannot make is put on the card directly.
 */
async function replaceCardCalls(
  runtime: TestRuntime,
  runId: string,
  calls: Array<{ tool: string; arguments: unknown; offered: boolean }>,
  writeToolNames: string[],
): Promise<void> {
  const stored = await runtime.dependencies.runs.getCard(runId);
  if (!stored) throw new Error('no card');
  const { sealer } = runtime.dependencies;
  const card = parseApprovalCard(await unsealJson(sealer, 'approval-card', runId, stored.sealedCard));
  const pendingCalls = calls.map((call, index) => ({ index, ...call }));
  await runtime.dependencies.runs.putCard({
    ...stored,
    toolNames: calls.map((call) => call.tool),
    writeToolNames,
    sealedCard: await sealJson(sealer, 'approval-card', runId, { ...card, pendingCalls }),
  });
}

describe('honest preview states (issue #9, item 6)', () => {
  const runtime = useTestRuntime({ extraTools: [approvalRead] });

  it('previews arguments the tool would refuse as the refusal, and a card of only such calls cannot be approved', async () => {
    // Prepare: a title longer than update_page_metadata accepts (255 characters).
    const { runId, view } = await startRunAndSettle(
      runtime,
      `Set the title of page 12 to '${'Long title '.repeat(30)}'`,
    );
    expect(view.status).toBe('waiting');

    // Act
    const card = await inboxCard(runtime, runId);
    const html = await inboxHtmlOf(runtime, runId);
    const approval = await decide(runtime, runId, { digest: card.digest, decision: 'approve' });

    // Assess: one unflagged refusal line, not "Preview failed (InvalidArguments)".
    expect(card.pendingTools[0]).toMatchObject({ registered: true, willRun: false });
    expect(card.pendingTools[0].preview).toEqual({
      status: 'refused',
      lines: [
        TEXTS.previewRefused(
          'update_page_metadata',
          'title: Too big: expected string to have <=255 characters',
        ),
      ],
    });
    expect(JSON.stringify(card)).not.toContain('Preview failed');
    expect(html).toContain(TEXTS.nothingToApprove);
    expect(html).toMatch(/<button type="button" class="approve" disabled>/);
    expect(approval.status).toBe(403);
    expect(refusalOf(approval).error.message).toBe(TEXTS.nothingToApprove);
    expect(bodyOf(await runtime.client('editor').getRun({ path: { id: runId } })).status).toBe('waiting');

    // Act: rejecting stays possible, and the run goes on.
    const rejection = await decide(runtime, runId, { digest: card.digest, decision: 'reject' });

    // Assess: the audit says the approver was shown a refusal, not a captured preview.
    expect(rejection.status).toBe(200);
    const audit = await runtime.dependencies.runs.getDecision(runId, view.turn);
    expect(readCardShown(audit?.cardShown ?? '').calls.map((call) => call.preview)).toEqual(['refused']);
    expect((await settle(runtime, runId, 'editor', view.turn)).status).toBe('completed');
  });

  it('says a call to a tool that was never registered will not run, and refuses to approve it alone', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(runtime, "Set the title of page 12 to 'Unregistered'");
    await replaceCardCalls(runtime, runId, [{ tool: 'delete_everything', arguments: {}, offered: true }], []);

    // Act
    const card = await inboxCard(runtime, runId);
    const html = await inboxHtmlOf(runtime, runId);
    const approval = await decide(runtime, runId, { digest: view.digest, decision: 'approve' });

    // Assess
    expect(card.pendingTools[0]).toMatchObject({
      tool: 'delete_everything',
      registered: false,
      willRun: false,
    });
    expect(html).toContain(TEXTS.toolNotRegistered);
    expect(html).not.toContain('no longer registered');
    expect(approval.status).toBe(403);
    expect(refusalOf(approval).error.message).toBe(TEXTS.nothingToApprove);
  });

  it('refuses a gate on a tool that requires approval but does not write with the one toolAccess rule, as for a write', async () => {
    // Prepare: a signed-in approver with no user record has the grant but no tool authority.
    const { runId, view } = await startRunAndSettle(runtime, "Set the title of page 12 to 'Audit'");
    await replaceCardCalls(
      runtime,
      runId,
      [{ tool: 'export_audit_log', arguments: {}, offered: true }],
      ['export_audit_log'],
    );
    const token = await signTokenWithRuntimeKey(runtime, { sub: 'gate-less', groups: ['agent_approve'] });

    // Act
    const approval = await apiClientWithToken(runtime.url, token).decideRun({
      path: { id: runId },
      body: { digest: view.digest, decision: 'approve' },
    });

    // Assess
    expect(approval.status).toBe(403);
    // One rule (issue #20, item 10): toolAccess covers every tool whose calls need approval.
    expect(refusalOf(approval).error.message).toBe(TEXTS.gateToolRefused('export_audit_log'));
    expect(refusalOf(approval).error.message).toContain(TEXTS.toolAccessRule);
  });
});

describe('bounded preview work (issue #9, item 8)', () => {
  const runtime = useTestRuntime();

  it('pauses with a bounded card when a preview returns 100,000 lines of 10,000 characters', async () => {
    // Prepare: the shipped writer's preview replaced by a flood (one string, shared by every line).
    const line = `${'flood '.repeat(1_666)}end\u200B`;
    const flood = new Array<string>(100_000).fill(line);
    const tools = runtime.dependencies.tools;
    const registered = tools.get.bind(tools);
    tools.get = (name) => {
      const tool = registered(name);
      return tool && name === 'update_page_metadata' ? { ...tool, preview: async () => flood } : tool;
    };
    let runId = '';
    let view: ResponseJson;
    try {
      // Act
      ({ runId, view } = await startRunAndSettle(runtime, "Set the title of page 12 to 'Flooded'"));
    } finally {
      tools.get = registered;
    }
    const card = await inboxCard(runtime, runId);

    // Assess: the run paused; the card holds 20 lines of at most 500 characters.
    expect(view.status).toBe('waiting');
    const lines: string[] = card.pendingTools[0].preview.lines;
    expect(card.pendingTools[0].preview.status).toBe('shown');
    expect(lines).toHaveLength(20);
    expect(lines.every((kept) => kept.length <= 500)).toBe(true);
    expect(lines[19]).toBe(TEXTS.previewMoreLines(99_981));
    expect(JSON.stringify(card).length).toBeLessThan(20_000);
  });
});
