import { randomUUID } from 'node:crypto';
import { Annotation, END, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import type { CountersignApprovals } from '../../lambdas/agents/countersign-approvals.js';
import {
  awaitCountersign,
  invokeWithCountersign,
  runCountersignedCalls,
} from '../../lambdas/agents/langgraph.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { bodyOf } from '../support/api-answers.js';
import { eventually, useTestRuntime } from '../support/local-runtime.js';
import { decideNextAgentCard, demoAgentApprovals, nextAgentCard } from './agent-adapters-support.js';
import { decide } from './approvers-support.js';
import { inboxCardOf, machineClientOf } from './external-runs-support.js';

const InvoiceState = Annotation.Root({
  customer: Annotation<string>,
  outcomes: Annotation<string[]>,
});

/**
 * A LangGraph.js graph (MemorySaver checkpointer) whose node proposes an invoice, interrupts for
 * countersign and runs what the answer approves; the host loop submits the interrupt's turn to
 * the embedded runtime, an approver decides its card, and the graph resumes with the answer.
 */
function invoiceGraph(approvals: CountersignApprovals, sent: unknown[], editable = false) {
  return new StateGraph(InvoiceState)
    .addNode('invoice', async (state) => {
      const answer = awaitCountersign({
        summary: `Invoice ${state.customer}.`,
        tools: [{ name: 'send_invoice', effect: 'write', editable }],
        calls: [
          {
            tool: 'send_invoice',
            callId: 'call_invoice',
            arguments: { customer: state.customer, amountCents: 120_000 },
          },
        ],
      });
      const outcomes = await runCountersignedCalls(
        answer,
        {
          send_invoice: async (input) => {
            sent.push(input);
            return 'sent';
          },
        },
        { approvals },
      );
      return {
        outcomes: outcomes.map((outcome) => (outcome.kind === 'rejected' ? outcome.message : outcome.kind)),
      };
    })
    .addEdge(START, 'invoice')
    .addEdge('invoice', END)
    .compile({ checkpointer: new MemorySaver() });
}

/** Invokes the graph for one customer on a thread of its own, countersigned under `demo-external`. */
function invoiceOnNewThread(
  graph: ReturnType<typeof invoiceGraph>,
  approvals: CountersignApprovals,
  customer: string,
) {
  return invokeWithCountersign(
    graph,
    { customer, outcomes: [] },
    { configurable: { thread_id: randomUUID() } },
    { approvals, configurationId: 'demo-external' },
  );
}

describe('the LangGraph.js adapter', () => {
  const runtime = useTestRuntime();
  const seen = new Set<string>();

  it('interrupts with the proposed call, resumes with the approval, runs the call and reports it', async () => {
    // Prepare
    const approvals = demoAgentApprovals(runtime);
    const sent: unknown[] = [];
    const graph = invoiceGraph(approvals, sent);

    // Act
    const approver = decideNextAgentCard(runtime, { decision: 'approve' }, seen);
    const state = await invoiceOnNewThread(graph, approvals, 'ACME');
    const card = await approver;
    const run = bodyOf(await machineClientOf(runtime).getExternalRun({ path: { id: card.runId } }));

    // Assess
    expect(card.pendingTools[0]).toMatchObject({
      tool: 'demo-external/send_invoice',
      arguments: { customer: 'ACME', amountCents: 120_000 },
    });
    expect(sent).toEqual([{ customer: 'ACME', amountCents: 120_000 }]);
    expect(state.outcomes).toEqual(['ran']);
    expect(run.reports).toEqual([
      { index: 0, outcome: 'succeeded', approved: true, reportedAt: expect.any(String) },
    ]);
  });

  it('resumes with a rejection: the node does not run the call and hands on the approver’s reason', async () => {
    // Prepare
    const sent: unknown[] = [];
    const approvals = demoAgentApprovals(runtime);
    const graph = invoiceGraph(approvals, sent);

    // Act
    const approver = decideNextAgentCard(runtime, { decision: 'reject', reason: 'Already invoiced' }, seen);
    const state = await invoiceOnNewThread(graph, approvals, 'Globex');
    await approver;

    // Assess
    expect(sent).toEqual([]);
    expect(state.outcomes).toEqual([TEXTS.agentCallRejected('Already invoiced')]);
  });

  it('runs the arguments an approver edited on the card of a tool the node declared editable, once the fresh card is approved', async () => {
    // Prepare
    const approvals = demoAgentApprovals(runtime);
    const sent: unknown[] = [];
    const graph = invoiceGraph(approvals, sent, true);
    const corrected = { customer: 'Initech', amountCents: 100_000 };

    // Act: the approver corrects the amount, then approves the card the edit put up
    const approver = (async () => {
      const first = await nextAgentCard(runtime, seen);
      await decide(runtime, first.runId, {
        digest: first.digest,
        decision: 'edit',
        edits: [{ index: 0, arguments: corrected }],
      });
      const fresh = await eventually(async () => {
        const card = await inboxCardOf(runtime, first.runId);
        return card.digest === first.digest ? undefined : card;
      });
      await decide(runtime, first.runId, { digest: fresh.digest, decision: 'approve' });
      return first;
    })();
    const state = await invoiceOnNewThread(graph, approvals, 'Initech');
    const card = await approver;
    const run = bodyOf(await machineClientOf(runtime).getExternalRun({ path: { id: card.runId } }));

    // Assess
    expect(card.pendingTools[0]).toMatchObject({
      editable: true,
      arguments: { customer: 'Initech', amountCents: 120_000 },
    });
    expect(sent).toEqual([corrected]);
    expect(state.outcomes).toEqual(['ran']);
    expect(run.calls).toEqual([
      expect.objectContaining({ decision: 'approved', arguments: corrected, edited: { by: 'approver' } }),
    ]);
    expect(run.reports).toEqual([
      {
        index: 0,
        outcome: 'succeeded',
        approved: true,
        reportedAt: expect.any(String),
        detail: TEXTS.agentRanEditedArguments('approver'),
      },
    ]);
  });
});
