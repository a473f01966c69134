import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { parseApprovalCard } from '../../../lambdas/core/approvals/approval-card.js';
import { buildCardCallViews } from '../../../lambdas/core/approvals/build-card-call-views.js';
import { resolveCalls } from '../../../lambdas/core/approvals/resolve-calls.js';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import { silentLogger } from '../../../lambdas/core/ports.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { defineTool, type Tool, ToolRegistry } from '../../../lambdas/core/tools/tool.js';
import { updatePageMetadataTool } from '../../../lambdas/tools/update-page-metadata.js';
import { InMemoryPageStore } from '../../support/in-memory-page-store.js';
import { createUser, samplePages } from '../../tools/page-tool-fixtures.js';

const approverWithPageRights = createUser({
  userId: 'approver',
  grants: ['agent_approve'],
  pageAccess: ['12', '14'],
  languageAccess: '*',
});
const operationsApprover = createUser({ userId: 'ops-approver', grants: ['agent_approve'] });

const PREVIEW_LINES = [
  'Page 12 (en): 1 field would change.',
  'description: "Winter sale on all coats" → "Spring sale"',
];

/** A card as version 1 sealed it (previews beside the calls): every test also reads it through the v1 reader. */
interface Version1Card {
  schemaVersion: 1;
  runId: string;
  turn: number;
  digest: string;
  pendingCalls: Array<{ index: number; tool: string; arguments: unknown; offered?: boolean }>;
  callPreviews?: Array<{ index: number; tool: string; lines: string[]; failed: boolean; refused?: boolean }>;
}

/** The card's calls as an open card holds them: parsed by the card reader, resolved once. */
function callsOf(card: Version1Card, tools: ToolRegistry) {
  return resolveCalls(parseApprovalCard(card).pendingCalls, tools);
}

function cardFor(tool: string, lines = PREVIEW_LINES, failed = false): Version1Card {
  return {
    schemaVersion: 1,
    runId: 'run-1',
    turn: 1,
    digest: 'sha256:test',
    pendingCalls: [{ index: 0, tool, arguments: { pageId: '12', description: 'Spring sale' } }],
    callPreviews: [{ index: 0, tool, lines, failed }],
  };
}

/** A writer under the same name as a previewing tool, but without the preview contract. */
const writerWithoutPreviewContract: Tool = defineTool({
  name: 'update_page_metadata',
  description: 'Same name, no preview contract.',
  effect: 'write',
  input: z.object({ pageId: z.string(), description: z.string() }),
  execute: async () => ({ content: 'ok', isError: false }),
}) as Tool;

async function build(card: Version1Card, viewer: UserProfile | undefined, tools: Tool[]) {
  const pages = new InMemoryPageStore(samplePages);
  const views = await buildCardCallViews({
    calls: callsOf(card, new ToolRegistry(tools)),
    viewer,
    context: { runId: 'run-1', pages },
    logger: silentLogger,
  });
  return { views, pages };
}

describe('buildCardCallViews (the read gate)', () => {
  it('withholds the preview from the operations approver and shows it to the approver with page rights', async () => {
    // Act
    const forOperations = await build(cardFor('update_page_metadata'), operationsApprover, [
      updatePageMetadataTool as Tool,
    ]);
    const forApprover = await build(cardFor('update_page_metadata'), approverWithPageRights, [
      updatePageMetadataTool as Tool,
    ]);

    // Assess
    expect(forOperations.views[0]?.preview).toEqual({ status: 'withheld', message: TEXTS.previewWithheld });
    expect(JSON.stringify(forOperations.views)).not.toContain('Winter sale');
    expect(forApprover.views[0]?.preview).toEqual({
      status: 'shown',
      lines: PREVIEW_LINES,
      caveat: 'Captured when the run paused — the target may have changed since.',
    });
  });

  it.each([
    ['its tool is no longer registered', approverWithPageRights, [] as Tool[]],
    ['its tool has no preview contract', approverWithPageRights, [writerWithoutPreviewContract]],
    ['there is no viewer', undefined, [updatePageMetadataTool as Tool]],
  ])('withholds a preview when its tool can no longer be asked: %s', async (_case, viewer, tools) => {
    // Act
    const { views } = await build(cardFor('update_page_metadata'), viewer, tools);

    // Assess
    expect(views[0]?.preview).toEqual({ status: 'withheld', message: TEXTS.previewWithheld });
    expect(JSON.stringify(views)).not.toContain('Winter sale');
  });

  it('withholds the preview when the gate itself fails, and logs only the error class', async () => {
    // Prepare
    const entries: string[] = [];
    const capture = (message: string, fields?: Record<string, unknown>) => {
      entries.push(JSON.stringify({ message, ...fields }));
    };
    const failingGate = defineTool({
      ...(updatePageMetadataTool as Tool),
      mayViewerReadPreview: async () => {
        throw new Error('Access denied for user x@host');
      },
    });

    // Act
    const views = await buildCardCallViews({
      calls: callsOf(cardFor('update_page_metadata'), new ToolRegistry([failingGate])),
      viewer: approverWithPageRights,
      context: { runId: 'run-1', pages: new InMemoryPageStore(samplePages) },
      logger: { debug: capture, info: capture, warn: capture, error: capture },
    });

    // Assess
    expect(views[0]?.preview.status).toBe('withheld');
    expect(entries.join('\n')).toContain('preview read gate failed');
    expect(entries.join('\n')).not.toContain('Access denied');
  });

  it('shows the caveat with every shown preview', async () => {
    // Prepare: two previewed calls, both readable by the viewer.
    const card: Version1Card = {
      ...cardFor('update_page_metadata'),
      pendingCalls: [
        { index: 0, tool: 'update_page_metadata', arguments: { pageId: '12', title: 'A' } },
        { index: 1, tool: 'update_page_metadata', arguments: { pageId: '14', title: 'B' } },
      ],
      callPreviews: [
        { index: 0, tool: 'update_page_metadata', lines: ['Page 12'], failed: false },
        { index: 1, tool: 'update_page_metadata', lines: ['Page 14'], failed: false },
      ],
    };

    // Act
    const { views } = await build(card, approverWithPageRights, [updatePageMetadataTool as Tool]);

    // Assess
    expect(views.map((view) => view.preview.status)).toEqual(['shown', 'shown']);
    for (const view of views) {
      expect(view.preview).toHaveProperty(
        'caveat',
        'Captured when the run paused — the target may have changed since.',
      );
    }
  });

  it('says "No preview — you are deciding without one" on a failed preview, with its flagged line', async () => {
    // Act
    const { views } = await build(
      cardFor('update_page_metadata', ['Preview failed (DatabaseError).'], true),
      operationsApprover,
      [updatePageMetadataTool as Tool],
    );

    // Assess
    expect(views[0]?.preview).toEqual({
      status: 'failed',
      lines: ['Preview failed (DatabaseError).'],
      message: 'No preview — you are deciding without one',
    });
  });

  it('renders no preview line for a call without a captured preview', async () => {
    // Prepare
    const card: Version1Card = { ...cardFor('update_page_metadata'), callPreviews: [] };
    delete card.callPreviews;

    // Act
    const { views, pages } = await build(card, approverWithPageRights, [updatePageMetadataTool as Tool]);

    // Assess
    expect(views[0]?.preview).toEqual({ status: 'none', message: TEXTS.noPreview });
    expect(pages.callCounts.getPage + pages.callCounts.getPages).toBe(0);
  });

  it.each([
    ['no lines at all', []],
    ['only blank lines', ['', '   ']],
  ])('renders a stored preview with %s as failed, never blank', async (_case, lines) => {
    // Act
    const { views } = await build(cardFor('update_page_metadata', lines), approverWithPageRights, [
      updatePageMetadataTool as Tool,
    ]);

    // Assess
    expect(views[0]?.preview).toEqual({
      status: 'failed',
      lines: ['Preview failed (EmptyPreview).'],
      message: TEXTS.previewFailed,
    });
  });

  it('shows a stored refusal line as refused (unflagged, no read gate) and says the call will not run', async () => {
    // Prepare: arguments update_page_metadata refuses (no field to set).
    const refusal = TEXTS.previewRefused('update_page_metadata', 'arguments: Set at least one of: title');
    const card: Version1Card = {
      ...cardFor('update_page_metadata'),
      pendingCalls: [{ index: 0, tool: 'update_page_metadata', arguments: { pageId: '12' } }],
      callPreviews: [
        { index: 0, tool: 'update_page_metadata', lines: [refusal], failed: false, refused: true },
      ],
    };

    // Act
    const { views } = await build(card, operationsApprover, [updatePageMetadataTool as Tool]);

    // Assess
    expect(views[0]).toMatchObject({ willRun: false, registered: true });
    expect(views[0]?.preview).toEqual({ status: 'refused', lines: [refusal] });
  });

  it('marks a call that will not run: a tool never registered, or not offered to the run', async () => {
    // Prepare
    const card: Version1Card = {
      ...cardFor('update_page_metadata'),
      pendingCalls: [
        { index: 0, tool: 'delete_everything', arguments: {} },
        { index: 1, tool: 'update_page_metadata', arguments: { pageId: '12', title: 'A' }, offered: false },
        { index: 2, tool: 'update_page_metadata', arguments: { pageId: '12', title: 'A' }, offered: true },
      ],
      callPreviews: [],
    };

    // Act
    const { views } = await build(card, approverWithPageRights, [updatePageMetadataTool as Tool]);

    // Assess
    expect(views.map((view) => [view.registered, view.willRun])).toEqual([
      [false, false],
      [true, false],
      [true, true],
    ]);
  });

  it('shows hidden and bidi characters of stored lines as markers on every surface', async () => {
    // Prepare: a card sealed before lines were marked at capture.
    const card = cardFor('update_page_metadata', ['description: "Old \u202E tail" → "New"', '\u200B']);

    // Act
    const { views } = await build(card, approverWithPageRights, [updatePageMetadataTool as Tool]);

    // Assess
    expect(views[0]?.preview).toMatchObject({
      status: 'shown',
      lines: ['description: "Old ⟨U+202E⟩ tail" → "New"', '⟨U+200B⟩'],
    });
  });
});
