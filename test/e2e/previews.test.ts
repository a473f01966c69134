import { describe, expect, it, vi } from 'vitest';
import { TEXTS } from '../../lambdas/core/texts.js';
import { renderCardCall } from '../../lambdas/handlers/http/inbox-page.js';
import { bodyOf } from '../support/api-answers.js';
import {
  type ResponseJson,
  settle,
  startRunAndSettle,
  type TestRuntime,
  useTestRuntime,
} from '../support/local-runtime.js';
import { readRunEvents } from '../support/server-sent-events.js';
import { decide, demoUser } from './approvers-support.js';

const CAVEAT = 'Captured when the run paused — the target may have changed since.';
const FAILED_CARD_TEXT = 'No preview — you are deciding without one';
const SECRET = 'Access denied for user x@host';

async function inboxCard(runtime: TestRuntime, runId: string, as: string): Promise<ResponseJson> {
  const inbox = await runtime.client(as).listInbox({ query: { limit: 100 } });
  expect(inbox.status).toBe(200);
  return bodyOf(inbox).cards.find((card: ResponseJson) => card.runId === runId);
}

describe('write previews over HTTP in local mode', () => {
  const runtime = useTestRuntime();

  it('withholds the preview for the operations approver, and shows the approver with page rights the old and new description', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(
      runtime,
      "Set the description of page 12 to 'Spring sale'",
    );
    expect(view.status).toBe('waiting');

    // Act
    const forApprover = await inboxCard(runtime, runId, 'approver');
    const forOperations = await inboxCard(runtime, runId, 'ops-approver');

    // Assess
    expect(forApprover.pendingTools[0].preview).toEqual({
      status: 'shown',
      lines: [
        'Page 12 (en): 1 field would change.',
        'description: "Hand-written by the marketing team: our spring range, in stores from March." → "Spring sale"',
      ],
      caveat: CAVEAT,
    });
    expect(forOperations.pendingTools[0].preview).toEqual({
      status: 'withheld',
      message: TEXTS.previewWithheld,
    });
    expect(JSON.stringify(forOperations)).not.toContain('Hand-written by the marketing team');
  });

  it('gives the same pending calls to the same viewer on all four surfaces, read-gated for a non-admin', async () => {
    // Prepare: the editor starts a run over two pages, then holds the approve grant and rights on page 12 only.
    const { runId } = await startRunAndSettle(
      runtime,
      "Set the description of page 12 to 'Four surfaces' and the title of page 14 to 'Vier'",
    );
    const editor = demoUser('editor');
    await runtime.dependencies.users.putUser({
      ...editor,
      grants: ['agent_run', 'agent_approve'],
      pageAccess: ['12'],
    });

    try {
      // Act
      const inboxJson = await inboxCard(runtime, runId, 'editor');
      const inboxHtml = await runtime
        .client('editor')
        .listInbox({ query: { limit: 100 }, headers: { accept: 'text/html' } });
      const runView = await runtime.client('editor').getRun({ path: { id: runId } });
      const stream = await readRunEvents(runtime, runId, 'editor');
      const awaiting = stream.events.find((event) => event.event === 'awaiting_approval');

      // Assess: one set of pending calls, gated for this viewer: shown for page 12, withheld for page 14.
      expect(inboxJson.pendingTools.map((tool: ResponseJson) => tool.preview.status)).toEqual([
        'shown',
        'withheld',
      ]);
      expect(bodyOf(runView).pendingTools).toEqual(inboxJson.pendingTools);
      expect(awaiting?.data.pendingTools).toEqual(inboxJson.pendingTools);
      expect(awaiting?.data.digest).toBe(inboxJson.digest);
      // A card of several calls offers to refuse each (per-call decisions)
      const perCall = inboxJson.pendingTools.length > 1;
      for (const tool of inboxJson.pendingTools)
        expect(inboxHtml.text).toContain(renderCardCall(tool, perCall));
      expect(inboxHtml.text).not.toContain('Angaben gemäß');
    } finally {
      await runtime.dependencies.users.putUser(editor);
    }
  });

  it('turns a throwing preview into a flagged line without the exception text on every surface, and the run still completes', async () => {
    // Prepare: the page store fails like a database with credentials in its message, for page 14 only.
    class AccessDeniedError extends Error {
      public override readonly name = 'AccessDeniedError';
    }
    const consoleLines: string[] = [];
    const consoleSpies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...values: unknown[]) => {
        consoleLines.push(values.map(String).join(' '));
      }),
    );
    const pages = runtime.dependencies.pages;
    const readPage = pages.getPage.bind(pages);
    pages.getPage = async (pageId) => {
      if (pageId === '14') throw new AccessDeniedError(SECRET);
      return readPage(pageId);
    };
    let runId = '';
    let surfaces: string[] = [];
    let approverCard: ResponseJson;
    try {
      ({ runId } = await startRunAndSettle(
        runtime,
        "Set the keywords of page 12 to 'spring' and the title of page 14 to 'Impressum neu'",
      ));
    } finally {
      pages.getPage = readPage;
    }

    try {
      // Act
      approverCard = await inboxCard(runtime, runId, 'approver');
      surfaces = [
        JSON.stringify(approverCard),
        (
          await runtime
            .client('approver')
            .listInbox({ query: { limit: 100 }, headers: { accept: 'text/html' } })
        ).text,
        (await runtime.client('editor').getRun({ path: { id: runId } })).text,
        (await readRunEvents(runtime, runId, 'editor')).text,
      ];
    } finally {
      for (const spy of consoleSpies) spy.mockRestore();
    }

    // Assess: a flagged line naming the class only, and the card's failed text.
    expect(approverCard.pendingTools.map((tool: ResponseJson) => tool.preview.status)).toEqual([
      'shown',
      'failed',
    ]);
    expect(approverCard.pendingTools[1].preview).toEqual({
      status: 'failed',
      lines: ['Preview failed (AccessDeniedError).'],
      message: FAILED_CARD_TEXT,
    });
    for (const surface of surfaces) {
      expect(surface).toContain('Preview failed (AccessDeniedError).');
      expect(surface).not.toContain('Access denied');
    }
    // The operator's log names the failure and its class; this deployment keeps even the text out of it.
    const logs = [...runtime.logLines, ...consoleLines].join('\n');
    expect(logs).toContain('"message":"preview failed"');
    expect(logs).toContain('"errorClass":"AccessDeniedError"');
    expect(logs).not.toContain('Access denied');

    // Act: a failed preview is never fatal; the write is approved and runs.
    const decision = await decide(runtime, runId, { digest: approverCard.digest, decision: 'approve' });
    const finished = await settle(runtime, runId, 'editor', approverCard.turn);

    // Assess
    expect(decision.status).toBe(200);
    expect(finished.status).toBe('completed');
    expect((await runtime.dependencies.pages.getPage('14'))?.title).toBe('Impressum neu');
  });

  it('shows the caveat with every shown preview', async () => {
    // Prepare
    const { runId } = await startRunAndSettle(
      runtime,
      "Set the author of page 12 to 'Ada' and the author of page 20 to 'Bea'",
      { as: 'admin' },
    );

    // Act
    const card = await inboxCard(runtime, runId, 'approver');

    // Assess
    const shown = card.pendingTools.filter((tool: ResponseJson) => tool.preview.status === 'shown');
    expect(shown).toHaveLength(2);
    for (const tool of shown) expect(tool.preview.caveat).toBe(CAVEAT);
  });
});

describe('the read gate over DynamoDB', () => {
  const runtime = useTestRuntime();

  it('reads the pages of a whole inbox page with one BatchGetItem, and none again for the same viewer', async () => {
    // Prepare: four waiting runs, five previewing calls over three pages.
    for (const input of [
      "Set the title of page 12 to 'A'",
      "Set the title of page 14 to 'B'",
      "Set the title of page 20 to 'C' and the title of page 12 to 'D'",
      "Set the keywords of page 14 to 'E'",
    ]) {
      expect((await startRunAndSettle(runtime, input, { as: 'admin' })).view.status).toBe('waiting');
    }
    runtime.calls.reset();

    // Act
    const first = await runtime.client('approver').listInbox();
    const firstReads = runtime.calls.snapshot();
    runtime.calls.reset();
    const second = await runtime.client('approver').listInbox();
    const secondReads = runtime.calls.snapshot();

    // Assess
    const statuses = (body: ResponseJson) =>
      body.cards.flatMap((card: ResponseJson) =>
        card.pendingTools.map((tool: ResponseJson) => tool.preview.status),
      );
    expect(statuses(first.body)).toEqual(['shown', 'shown', 'shown', 'shown', 'shown']);
    expect(statuses(second.body)).toEqual(statuses(first.body));
    // One batch for the cards the approver's inbox entries point to (issue #16), one for the read gate's pages
    expect(firstReads['DynamoDB:BatchGetItem']).toBe(2);
    expect(secondReads['DynamoDB:BatchGetItem']).toBe(1);
    // The approvers' route's 4 shards and the pre-sharding partition, whatever the queue length
    expect(firstReads['DynamoDB:Query']).toBe(5);
    // The only item read besides the inbox queries and batches is the viewer's user record.
    expect(firstReads['DynamoDB:GetItem']).toBe(1);
  });
});

describe('GET /runs/{id}/events', () => {
  const runtime = useTestRuntime();

  it('streams the turns, the tool results without their text, and the final state, then ends', async () => {
    // Prepare
    const { runId, view } = await startRunAndSettle(runtime, 'What is on page 12?');
    expect(view.status).toBe('completed');

    // Act
    const stream = await readRunEvents(runtime, runId, 'editor');

    // Assess
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('x-content-type-options')).toBe('nosniff');
    expect(stream.events.map((event) => event.event)).toEqual(['turn', 'tool_result', 'turn', 'state']);
    expect(stream.events[0]?.data).toEqual({
      turn: 1,
      text: '',
      toolCalls: [{ index: 0, tool: 'get_page' }],
    });
    expect(stream.events[1]?.data).toEqual({ turn: 1, index: 0, tool: 'get_page', isError: false });
    expect(stream.events[2]?.data).toMatchObject({ turn: 2, toolCalls: [] });
    expect(stream.events[3]?.data).toMatchObject({ runId, status: 'completed', turn: 2 });
  });

  it('follows a running run until it waits, then sends awaiting_approval with its pending calls and the state', async () => {
    // Prepare
    const started = await runtime.client('editor').startRun({
      body: { taskId: 'page-metadata', input: "Set the title of page 12 to '<script>alert(1)</script>'" },
    });
    expect(started.status).toBe(202);

    // Act
    const stream = await readRunEvents(runtime, bodyOf(started).runId, 'editor');

    // Assess
    const names = stream.events.map((event) => event.event);
    expect(names.slice(-3)).toEqual(['turn', 'awaiting_approval', 'state']);
    const awaiting = stream.events.at(-2)?.data;
    expect(awaiting.pendingTools).toEqual([
      expect.objectContaining({
        index: 0,
        tool: 'update_page_metadata',
        arguments: { pageId: '12', title: '<script>alert(1)</script>' },
        preview: expect.objectContaining({ status: 'shown', caveat: CAVEAT }),
      }),
    ]);
    expect(stream.events.at(-1)?.data).toMatchObject({ status: 'waiting' });
    expect(stream.text).not.toContain('<script>');
  });

  it('answers a viewer who is neither the owner nor an admin with the same 404 as an unknown run', async () => {
    // Prepare
    const { runId } = await startRunAndSettle(runtime, "Set the keywords of page 12 to 'x'");

    // Act: the stream is the owner's (an approver reads the run's page and audit instead)
    const asApprover = await readRunEvents(runtime, runId, 'approver');
    const runAsApprover = await runtime.client('editor').getRun({ path: { id: 'no-such-run' } });
    const unknown = await readRunEvents(runtime, 'no-such-run', 'approver');
    const asAdmin = await readRunEvents(runtime, runId, 'admin');
    const anonymous = await readRunEvents(runtime, runId);

    // Assess
    expect(asApprover.status).toBe(404);
    expect(JSON.parse(asApprover.text)).toEqual(runAsApprover.body);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toBe(asApprover.text);
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.events.at(-1)?.data.status).toBe('waiting');
    expect(anonymous.status).toBe(401);
  });
});
