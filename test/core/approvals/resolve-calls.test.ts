import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { ApprovalCard } from '../../../lambdas/core/approvals/approval-card.js';
import { buildCardCallViews } from '../../../lambdas/core/approvals/build-card-call-views.js';
import { isNothingRunnable } from '../../../lambdas/core/approvals/call-runnability.js';
import { evaluateApproveGate } from '../../../lambdas/core/approvals/decision-gate.js';
import { readCardShown, serializeCardShown } from '../../../lambdas/core/approvals/decision-record.js';
import {
  classifyCall,
  classifyCallForExecution,
  isGuardedMoreThan,
  needsHumanApproval,
  stricterGuard,
} from '../../../lambdas/core/approvals/needs-human-approval.js';
import { resolveCalls } from '../../../lambdas/core/approvals/resolve-calls.js';
import type { StoredCard } from '../../../lambdas/core/approvals/stored-card.js';
import { silentLogger } from '../../../lambdas/core/ports.js';
import { awaitApproval } from '../../../lambdas/core/runs/await-approval.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { executeTools } from '../../../lambdas/core/runs/execute-tools.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { startRun } from '../../../lambdas/core/runs/start-run.js';
import { takeModelTurn } from '../../../lambdas/core/runs/take-model-turn.js';
import { defineTool, type Tool, ToolRegistry } from '../../../lambdas/core/tools/tool.js';
import { InMemoryPageStore } from '../../support/in-memory-page-store.js';
import { createUser, samplePages } from '../../tools/page-tool-fixtures.js';
import { createHarness, PAGE_ID, person } from '../runs/use-case-harness.js';

/** A write tool whose schema counts how often it parses arguments. */
function countingWriteTool(): { tool: Tool; parses: () => number } {
  let parses = 0;
  const tool = defineTool({
    name: 'counted_write',
    description: 'Counts its parses.',
    effect: 'write',
    input: z.custom<{ pageId: string }>((value) => {
      parses += 1;
      return typeof (value as { pageId?: unknown })?.pageId === 'string';
    }),
    preview: async () => ['would change'],
    mayViewerReadPreview: async () => true,
    execute: async () => ({ content: 'ok', isError: false }),
  }) as Tool;
  return { tool, parses: () => parses };
}

const card: ApprovalCard = {
  schemaVersion: 4,
  runId: 'run-1',
  turn: 1,
  digest: 'sha256:test',
  pendingCalls: [
    {
      index: 0,
      tool: 'counted_write',
      arguments: { pageId: '12' },
      offered: true,
      preview: { lines: ['x'], failed: false },
    },
    { index: 1, tool: 'counted_write', arguments: { pageId: 12 }, offered: true },
  ],
};

const stored = {
  owner: 'editor',
  writeToolNames: ['counted_write'],
  runId: 'run-1',
} as StoredCard;

describe('resolveCalls (arguments parsed once)', () => {
  it('parses each call once for the card view, the record gate, the runnability rule and the audit', async () => {
    // Prepare
    const { tool, parses } = countingWriteTool();
    const viewer = createUser({ userId: 'approver', grants: ['agent_approve'], toolAccess: '*' });
    const pages = new InMemoryPageStore(samplePages);

    // Act
    const calls = resolveCalls(card.pendingCalls, new ToolRegistry([tool]));
    const views = await buildCardCallViews({
      calls,
      viewer,
      context: { runId: 'run-1', pages },
      logger: silentLogger,
    });
    const gate = await evaluateApproveGate({
      principal: viewer,
      card: stored,
      policy: { fourEyes: false, requiredApprovals: 1, decisionGate: 'record' },
      approvalCalls: async () => calls,
      pages,
      logger: silentLogger,
    });
    const nothingRuns = isNothingRunnable(calls);
    const shown = serializeCardShown(card);

    // Assess
    expect(parses()).toBe(card.pendingCalls.length);
    expect(calls.map((call) => call.arguments.kind)).toEqual(['accepted', 'refused']);
    expect(views.map((view) => [view.willRun, view.preview.status])).toEqual([
      [true, 'shown'],
      [false, 'none'],
    ]);
    // The record gate fails closed on arguments the tool refuses.
    expect(gate).toMatchObject({ kind: 'refused', gate: 'record' });
    expect(nothingRuns).toBe(false);
    expect(readCardShown(shown).calls.map((call) => call.preview)).toEqual(['captured', 'none']);
  });

  it('names the refused fields of a call, never its values', () => {
    const tool = defineTool({
      name: 'strict',
      description: 'Strict.',
      effect: 'write',
      input: z.object({ title: z.string() }),
      execute: async () => ({ content: 'ok', isError: false }),
    }) as Tool;
    const [resolved] = resolveCalls(
      [{ index: 0, tool: 'strict', arguments: { title: 15 }, offered: true }],
      new ToolRegistry([tool]),
    );
    expect(resolved?.arguments).toEqual({ kind: 'refused', problem: expect.stringMatching(/^title: /) });
    expect(JSON.stringify(resolved?.arguments)).not.toContain('15');
  });
});

/** A registry of the one tool `name`, wrapped so that every parse of its arguments is counted. */
function countingParsesOf(tools: ToolRegistry, name: string): { tools: ToolRegistry; parses: () => number } {
  const tool = tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  let parses = 0;
  const counter = z.custom<unknown>(() => {
    parses += 1;
    return true;
  });
  const counted = { ...tool, input: z.pipe(counter, tool.input as z.ZodType) } as Tool;
  return {
    tools: new ToolRegistry([counted]),
    parses: () => parses,
  };
}

describe('arguments parsed once per step (the pause and the execution)', () => {
  it('parses a guarded, previewed call once at the pause and once at execution', async () => {
    // Prepare: a relative write, which reads a precondition and a preview at the pause, and
    // checks the precondition again and runs at execution.
    const tool = 'append_page_keywords';
    const owner = person('olivia', { grants: ['agent_run'], toolAccess: [tool] });
    const approver = person('alice', { grants: ['agent_approve'], toolAccess: [tool] });
    const harness = createHarness({ configuration: { allowedTools: [tool] }, users: [owner, approver] });
    const { runId } = await startRun(
      harness.dependencies,
      owner,
      {
        configurationId: 'pages',
        input: `Call ${tool} with ${JSON.stringify({ pageId: PAGE_ID, keywords: ['sale'] })}`,
      },
      'user-record',
    );
    const { turn } = await takeModelTurn(harness.dependencies, { runId, turn: 0 });
    const pause = countingParsesOf(harness.dependencies.tools, tool);
    const execution = countingParsesOf(harness.dependencies.tools, tool);

    // Act
    await awaitApproval(
      { ...harness.dependencies, tools: pause.tools },
      { runId, turn, taskToken: 'task-token' },
    );
    const { cards } = await listInbox(harness.dependencies, approver, { limit: 10 });
    const [card] = cards;
    if (card === undefined || !('digest' in card)) throw new Error('the approver sees no card');
    await decideRun(harness.dependencies, approver, runId, { decision: 'approve', digest: card.digest });
    const executed = await executeTools({ ...harness.dependencies, tools: execution.tools }, { runId, turn });

    // Assess: each step parsed once and used it: the preview shows, and the write ran on the
    // precondition sealed at the pause (a call sealed without one would be asked again: 'review').
    expect(pause.parses()).toBe(1);
    expect(execution.parses()).toBe(1);
    expect(card.pendingTools[0]?.preview.status).toBe('shown');
    expect(executed.route).toBe('model');
    expect((await harness.dependencies.pages.getPage(PAGE_ID))?.keywords).toContain('sale');
  });
});

describe('classifyCall (the one rule)', () => {
  const write = { effect: 'write' as const };
  const read = { effect: 'read' as const };
  const asking = { ...read, requiresApproval: true };

  it.each([
    ['an offered write', { offered: true }, write, 'write'],
    ['an offered read that asks for approval', { offered: true }, asking, 'approval'],
    ['an offered read', { offered: true }, read, 'none'],
    ['a write the model was not offered', { offered: false }, write, 'none'],
    ['an offered call whose tool could not be established', { offered: true }, undefined, 'unconfirmed'],
    [
      'a write the turn found, now claiming to be read-only',
      { offered: true, guard: 'write' },
      read,
      'unconfirmed',
    ],
    [
      'a write the turn found, now a read that asks',
      { offered: true, guard: 'write' },
      asking,
      'unconfirmed',
    ],
    ['a read the turn found, now a write', { offered: true, guard: 'none' }, write, 'write'],
    [
      'an unconfirmed call whose tool is listed as a write again',
      { offered: true, guard: 'unconfirmed' },
      write,
      'write',
    ],
  ] as const)('%s: %s', (_case, call, tool, expected) => {
    expect(classifyCall(call, tool)).toBe(expected);
    expect(needsHumanApproval(classifyCall(call, tool))).toBe(expected !== 'none');
  });

  it('classifies for execution from the tool as listed now: one that will not run needs nothing', () => {
    expect(classifyCallForExecution({ offered: true }, write)).toBe('write');
    expect(classifyCallForExecution({ offered: true }, undefined)).toBe('none');
    expect(classifyCallForExecution({ offered: false }, write)).toBe('none');
  });

  it('finds a call guarded more only where approval is needed now and was not then', () => {
    expect(isGuardedMoreThan('write', 'none')).toBe(true);
    expect(isGuardedMoreThan('approval', 'none')).toBe(true);
    expect(isGuardedMoreThan('write', 'unconfirmed')).toBe(false);
    expect(isGuardedMoreThan('none', 'write')).toBe(false);
    expect(stricterGuard('write', 'unconfirmed')).toBe('unconfirmed');
    expect(stricterGuard('approval', 'write')).toBe('write');
    expect(stricterGuard('none', 'none')).toBe('none');
  });
});
