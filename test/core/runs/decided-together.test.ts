import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import type { ModelProvider } from '../../../lambdas/core/model.js';
import { auditRun } from '../../../lambdas/core/runs/audit-run.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { executeTools } from '../../../lambdas/core/runs/execute-tools.js';
import { listInbox } from '../../../lambdas/core/runs/list-inbox.js';
import { defineTool } from '../../../lambdas/core/tools/tool.js';
import { createHarness, OWNER, person, refusalOf, startPausedRun } from './use-case-harness.js';

/** Two legs of one transfer: a tool that ties its own calls of a turn together. */
const applied: number[] = [];
const transferLeg = defineTool<{ amount: number }>({
  name: 'transfer_leg',
  description: 'Books one leg of a transfer.',
  effect: 'write',
  input: z.object({ amount: z.number() }),
  decidedWith: ['transfer_leg'],
  async execute(args) {
    applied.push(args.amount);
    return { content: `Booked ${args.amount}.`, isError: false };
  },
});

/** Proposes the two legs (and a page read beside them), then ends once it reads results. */
const twoLegs: ModelProvider = {
  name: 'scripted',
  async converse(request) {
    const answered = request.messages.some(
      (message) => message.role === 'user' && message.content.some((block) => block.type === 'tool_result'),
    );
    if (answered) return { stopReason: 'end_turn', content: [{ type: 'text', text: 'Done.' }] };
    return {
      stopReason: 'tool_use',
      content: [
        { type: 'tool_call', callId: 'c0', name: 'transfer_leg', arguments: { amount: -5 } },
        {
          type: 'tool_call',
          callId: 'c1',
          name: 'update_page_metadata',
          arguments: { pageId: '12', title: 'T' },
        },
        { type: 'tool_call', callId: 'c2', name: 'transfer_leg', arguments: { amount: 5 } },
      ],
    };
  },
};

describe('calls decided together (a tool declares decidedWith)', () => {
  it('records the group at the pause, shows it, refuses choices that split it, and lets the rest be refused', async () => {
    // Prepare
    const approver = person('alice', {
      grants: ['agent_approve'],
      toolAccess: ['update_page_metadata', 'transfer_leg'],
    });
    const harness = createHarness({
      configuration: { allowedTools: ['update_page_metadata', 'transfer_leg'] },
      extraTools: [transferLeg],
      model: twoLegs,
      users: [OWNER, approver],
    });
    const paused = await startPausedRun(harness);
    const stored = await harness.runs.getCard(paused.runId);
    const { cards } = await listInbox(harness.dependencies, approver, { limit: 10 });
    const card = cards.find((entry) => entry.runId === paused.runId);
    const digest = stored?.digest ?? '';

    // Act
    const split = await refusalOf(
      decideRun(harness.dependencies, approver, paused.runId, {
        digest,
        decision: 'approve',
        calls: [{ index: 2, decision: 'reject' }],
      }),
    );
    const decided = await decideRun(harness.dependencies, approver, paused.runId, {
      digest,
      decision: 'approve',
      calls: [{ index: 1, decision: 'reject', reason: 'not this page' }],
    });
    applied.length = 0;
    await executeTools(harness.dependencies, { runId: paused.runId, turn: paused.turn });

    // Assess
    expect(stored?.decisionGroups).toEqual([[0, 2]]);
    expect(card).toMatchObject({ decidedTogether: [[0, 2]] });
    expect(split).toMatchObject({ code: 'bad-request', field: 'body.calls' });
    expect(decided).toMatchObject({
      kind: 'decided',
      choices: [
        { decision: 'approve' },
        { decision: 'reject', reason: 'not this page' },
        { decision: 'approve' },
      ],
    });
    expect(applied).toEqual([-5, 5]);
    expect((await harness.dependencies.pages.getPage('12'))?.title).not.toBe('T');
    // The audit says which call was refused, and why.
    const audit = await auditRun(harness.dependencies, approver, paused.runId);
    expect(audit.entries.find((entry) => entry.kind === 'decision')).toMatchObject({
      decision: 'approve',
      choices: [
        { index: 0, decision: 'approve' },
        { index: 1, tool: 'update_page_metadata', decision: 'reject', reason: 'not this page' },
        { index: 2, decision: 'approve' },
      ],
    });
  });
});
