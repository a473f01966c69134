import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { ApprovalCard } from '../../../lambdas/core/approvals/approval-card.js';
import { effectiveTurnPolicy, evaluateApproveGate } from '../../../lambdas/core/approvals/decision-gate.js';
import { resolveCalls } from '../../../lambdas/core/approvals/resolve-calls.js';
import { STORED_CARD_SCHEMA_VERSION, type StoredCard } from '../../../lambdas/core/approvals/stored-card.js';
import { policyFloorSchema } from '../../../lambdas/core/policy/policy-floor.js';
import { silentLogger } from '../../../lambdas/core/ports.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { defineTool, type Tool, ToolRegistry } from '../../../lambdas/core/tools/tool.js';
import { updatePageMetadataTool } from '../../../lambdas/tools/update-page-metadata.js';
import { InMemoryPageStore } from '../../support/in-memory-page-store.js';
import { createUser, samplePages } from '../../tools/page-tool-fixtures.js';

const approver = createUser({
  userId: 'approver',
  grants: ['agent_approve'],
  pageAccess: ['12'],
  languageAccess: '*',
  toolAccess: ['update_page_metadata'],
});
const operationsApprover = createUser({
  userId: 'ops-approver',
  grants: ['agent_approve'],
  toolAccess: ['update_page_metadata'],
});

/** A card paused before k-of-n and the record gate: none of their fields. */
const storedCard: StoredCard = {
  schemaVersion: STORED_CARD_SCHEMA_VERSION,
  runId: 'run-1',
  owner: 'editor',
  label: 'Label',
  configurationId: 'demo',
  turn: 1,
  digest: 'sha256:test',
  pausedAt: '2026-03-01T10:00:00.000Z',
  expiresAt: '2026-03-08T10:00:00.000Z',
  toolNames: ['update_page_metadata'],
  writeToolNames: ['update_page_metadata'],
  fourEyes: false,
  revealRejectionReason: false,
  state: 'open',
  sealedCard: new Uint8Array(),
  sealedToken: new Uint8Array(),
};

const approvalCard: ApprovalCard = {
  schemaVersion: 4,
  runId: 'run-1',
  turn: 1,
  digest: 'sha256:test',
  pendingCalls: [
    { index: 0, tool: 'update_page_metadata', arguments: { pageId: '12', title: 'x' }, offered: true },
  ],
};

const writerWithoutRecordCheck: Tool = defineTool({
  name: 'update_page_metadata',
  description: 'Same name, no record check.',
  effect: 'write',
  input: z.object({ pageId: z.string(), title: z.string() }),
  execute: async () => ({ content: 'ok', isError: false }),
});

const writerWhoseCheckThrows: Tool = defineTool({
  ...writerWithoutRecordCheck,
  mayViewerReadPreview: async () => {
    throw new Error('the store is down');
  },
});

function gate(principal = approver, tools = new ToolRegistry([updatePageMetadataTool])) {
  return evaluateApproveGate({
    principal,
    card: storedCard,
    policy: { fourEyes: false, requiredApprovals: 1, decisionGate: 'record' },
    approvalCalls: async () => resolveCalls(approvalCard.pendingCalls, tools),
    pages: new InMemoryPageStore(samplePages),
    logger: silentLogger,
  });
}

describe('the decision gate', () => {
  it('reads a card from before k-of-n as one approval under the tool gate, and raises it to the floor', () => {
    // Act
    const unchanged = effectiveTurnPolicy(storedCard, undefined);
    const raised = effectiveTurnPolicy(
      storedCard,
      policyFloorSchema.parse({ requiredApprovals: 2, fourEyesTools: ['update_page_metadata'] }),
    );

    // Assess
    expect(unchanged).toEqual({ fourEyes: false, requiredApprovals: 1, decisionGate: 'tool' });
    expect(raised).toEqual({ fourEyes: true, requiredApprovals: 2, decisionGate: 'tool' });
  });

  it('admits an approver who passes the record check of every write', async () => {
    // Act & Assess
    expect(await gate()).toEqual({ kind: 'allowed' });
  });

  it.each([
    [
      'an approver without rights on the record',
      operationsApprover,
      new ToolRegistry([updatePageMetadataTool]),
    ],
    ['a tool that is no longer registered', approver, new ToolRegistry([])],
    ['a tool without a record check', approver, new ToolRegistry([writerWithoutRecordCheck])],
    ['a record check that throws', approver, new ToolRegistry([writerWhoseCheckThrows])],
  ])('refuses, failing closed, for %s', async (_case, principal, tools) => {
    // Act
    const outcome = await gate(principal, tools);

    // Assess
    expect(outcome).toEqual({
      kind: 'refused',
      gate: 'record',
      message: TEXTS.gateRecordRefused('update_page_metadata'),
    });
  });
});

describe('one rule for what an approver must hold (issue #20, item 10)', () => {
  /** A card whose calls need approval for these tools, and also call `get_page`, which needs none. */
  function cardGuarding(...guarded: string[]): StoredCard {
    return { ...storedCard, toolNames: ['get_page', ...guarded], writeToolNames: guarded };
  }

  const toolGate = (principal: typeof approver, card: StoredCard) =>
    evaluateApproveGate({
      principal,
      card,
      policy: { fourEyes: false, requiredApprovals: 1, decisionGate: 'tool' },
      approvalCalls: async () => [],
      pages: new InMemoryPageStore(samplePages),
      logger: silentLogger,
    });

  it.each([
    ['a write', 'update_page_metadata'],
    ['a read that asks for approval', 'export_audit_log'],
    ['a tool whose effect could not be confirmed', 'tickets__create_ticket'],
  ])('covers %s with toolAccess, and refuses it in the same words', async (_case, tool) => {
    // Prepare
    const without = { ...approver, toolAccess: ['get_page'] };
    const holding = { ...approver, toolAccess: [tool] };

    // Act
    const refused = await toolGate(without, cardGuarding(tool));
    const allowed = await toolGate(holding, cardGuarding(tool));

    // Assess: a read that runs without approval (get_page) needs no tool access.
    expect(refused).toEqual({ kind: 'refused', gate: 'tool', message: TEXTS.gateToolRefused(tool) });
    expect(refused.kind === 'refused' && refused.message).toContain(TEXTS.toolAccessRule);
    expect(allowed).toEqual({ kind: 'allowed' });
  });

  it('is the rule docs/approvers.md states wherever it says what toolAccess covers', () => {
    // Prepare
    const approvers = readFileSync(new URL('../../../docs/approvers.md', import.meta.url), 'utf8').replace(
      /\s+/g,
      ' ',
    );

    // Assess: stated word for word, and nowhere narrowed to writes.
    expect(approvers).toContain(TEXTS.toolAccessRule);
    expect(approvers).not.toMatch(/toolAccess`?:? the tools whose writes/);
    expect(approvers).not.toMatch(/`toolAccess` for every write tool/);
    expect(approvers).not.toContain('the message calls it a write only when it writes');
  });
});

describe('the gate of a per-call approval and of an edited card (issue #22)', () => {
  /** Two writes of different tools; the approver may release only the page writer's. */
  const twoTools: StoredCard = {
    ...storedCard,
    toolNames: ['update_page_metadata', 'tickets__create_ticket'],
    writeToolNames: ['update_page_metadata', 'tickets__create_ticket'],
    callGuards: [
      { index: 0, tool: 'update_page_metadata', guard: 'write' },
      { index: 1, tool: 'tickets__create_ticket', guard: 'write' },
    ],
  };

  const toolGate = (
    card: StoredCard,
    approvedIndexes?: ReadonlySet<number>,
    policy = { fourEyes: false, requiredApprovals: 1 },
  ) =>
    evaluateApproveGate({
      principal: approver,
      card,
      policy: { ...policy, decisionGate: 'tool' },
      approvalCalls: async () => [],
      pages: new InMemoryPageStore(samplePages),
      logger: silentLogger,
      ...(approvedIndexes ? { approvedIndexes } : {}),
    });

  it('gates only the calls an approval approves', async () => {
    // Act
    const whole = await toolGate(twoTools);
    const own = await toolGate(twoTools, new Set([0]));
    const other = await toolGate(twoTools, new Set([1]));

    // Assess
    expect(whole).toMatchObject({
      kind: 'refused',
      message: TEXTS.gateToolRefused('tickets__create_ticket'),
    });
    expect(own).toEqual({ kind: 'allowed' });
    expect(other).toMatchObject({ kind: 'refused', gate: 'tool' });
  });

  it('gates a card put before call guards were recorded whole, failing closed', async () => {
    // Act
    const outcome = await toolGate({ ...twoTools, callGuards: undefined }, new Set([0]));

    // Assess
    expect(outcome).toMatchObject({ kind: 'refused', gate: 'tool' });
  });

  it('refuses the editor’s own approval under four-eyes or k-of-n, and only then', async () => {
    // Prepare
    const edited = { ...storedCard, editedBy: 'approver' };

    // Act
    const alone = await toolGate(edited);
    const fourEyes = await toolGate(edited, undefined, { fourEyes: true, requiredApprovals: 1 });
    const twoApprovers = await toolGate(edited, undefined, { fourEyes: false, requiredApprovals: 2 });
    const someoneElses = await toolGate({ ...storedCard, editedBy: 'reviewer' }, undefined, {
      fourEyes: true,
      requiredApprovals: 1,
    });

    // Assess
    expect(alone).toEqual({ kind: 'allowed' });
    for (const outcome of [fourEyes, twoApprovers]) {
      expect(outcome).toEqual({ kind: 'refused', gate: 'own-edit', message: TEXTS.gateOwnEdit });
    }
    expect(someoneElses).toEqual({ kind: 'allowed' });
  });

  it('refuses an editor of any approved call of a card edited by several, reading the calls', async () => {
    // Prepare: the card names its first editor; call 1 was edited by the approver afterwards
    const card = { ...storedCard, editedBy: 'reviewer' };
    const calls = resolveCalls(
      [
        {
          index: 0,
          tool: 'update_page_metadata',
          arguments: { pageId: '12' },
          offered: true,
          edited: { by: 'reviewer', originalArguments: {} },
        },
        {
          index: 1,
          tool: 'update_page_metadata',
          arguments: { pageId: '14' },
          offered: true,
          edited: { by: approver.userId, originalArguments: {} },
        },
      ],
      new ToolRegistry([updatePageMetadataTool]),
    );
    const gateOn = (approvedIndexes?: ReadonlySet<number>) =>
      evaluateApproveGate({
        principal: approver,
        card,
        policy: { fourEyes: true, requiredApprovals: 1, decisionGate: 'tool' },
        approvalCalls: async () => calls,
        pages: new InMemoryPageStore(samplePages),
        logger: silentLogger,
        ...(approvedIndexes ? { approvedIndexes } : {}),
      });

    // Act
    const whole = await gateOn();
    const ownCall = await gateOn(new Set([1]));
    const othersCall = await gateOn(new Set([0]));

    // Assess
    for (const outcome of [whole, ownCall]) {
      expect(outcome).toEqual({ kind: 'refused', gate: 'own-edit', message: TEXTS.gateOwnEdit });
    }
    expect(othersCall).toEqual({ kind: 'allowed' });
  });
});
