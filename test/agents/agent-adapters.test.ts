import { Annotation, END, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import { assistantMessage, functionCall } from '@openai/agents/testing';
import { generateText, type ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { countersignToolApprovals } from '../../lambdas/agents/ai-sdk.js';
import type { CountersignApprovals } from '../../lambdas/agents/countersign-approvals.js';
import {
  awaitCountersign,
  invokeWithCountersign,
  runCountersignedCalls,
} from '../../lambdas/agents/langgraph.js';
import { countersignInterruptions } from '../../lambdas/agents/openai-agents.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { approvalsWithFakeCountersign, decidedWith, runInStatus, SUBMITTED } from './fake-countersign.js';
import { aiSdkInvoiceAgent, openAiInvoiceAgent } from './invoice-agents.js';

/*
 * An approver's edit, as the answer of an external run carries it (`arguments` to run instead,
 * `edited.by`), fabricated: each SDK's own loop meets it. Where the SDK can run only the model's
 * arguments the adapter refuses the call; LangGraph's resume can carry them, so its node runs them.
 */
const PROPOSED = { customer: 'ACME', amountCents: 120_000 };
const EDITED = { customer: 'ACME', amountCents: 100_000 };
const EDITED_ANSWER = decidedWith([
  {
    index: 0,
    callId: 'call_invoice',
    tool: 'send_invoice',
    decision: 'approved',
    arguments: EDITED,
    edited: { by: 'approver-1' },
  },
]);
/** A LangGraph graph whose node asks countersign for one invoice and runs what is approved. */
function langGraphInvoiceGraph(approvals: CountersignApprovals) {
  const sent: unknown[] = [];
  const State = Annotation.Root({ outcomes: Annotation<string[]> });
  const graph = new StateGraph(State)
    .addNode('invoice', async () => {
      const answer = awaitCountersign({
        tools: [{ name: 'send_invoice', effect: 'write' }],
        calls: [{ tool: 'send_invoice', callId: 'call_invoice', arguments: PROPOSED }],
      });
      const send = (input: Record<string, unknown>) => {
        sent.push(input);
        return 'sent';
      };
      const outcomes = await runCountersignedCalls(answer, { send_invoice: send }, { approvals });
      return { outcomes: outcomes.map((outcome) => outcome.kind) };
    })
    .addEdge(START, 'invoice')
    .addEdge('invoice', END)
    .compile({ checkpointer: new MemorySaver() });
  return { graph, sent };
}

describe('an adapter when countersign fails', () => {
  it('OpenAI Agents SDK: throws and leaves the interruption undecided, so the resumed run stops on it again and nothing runs', async () => {
    // Prepare
    const { approvals } = approvalsWithFakeCountersign({
      submit: [{ status: 503, body: { error: { code: 'unavailable', message: 'Try again.' } } }],
    });
    const { agent, runner, sent } = openAiInvoiceAgent([
      [functionCall('send_invoice', PROPOSED, { callId: 'call_invoice' })],
    ]);
    const first = await runner.run(agent, 'Invoice ACME.');

    // Act
    const failure = await countersignInterruptions(first, {
      approvals,
      configurationId: 'billing-agent',
      clientKey: 'turn-1',
    }).catch((error: unknown) => error);
    const resumed = await runner.run(agent, first.state);

    // Assess
    expect(failure).toMatchObject({
      code: 'unavailable',
      message: TEXTS.agentCountersignFailing('submit the turn', 503),
    });
    expect(resumed.interruptions.map((item) => item.name)).toEqual(['send_invoice']);
    expect(sent).toEqual([]);
  });
  it('LangGraph.js: throws from the host loop and leaves the graph on its interrupt, so the node runs nothing', async () => {
    // Prepare
    const dropped = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
    const { approvals } = approvalsWithFakeCountersign({ submit: [{ fail: dropped }] });
    const { graph, sent } = langGraphInvoiceGraph(approvals);
    const config = { configurable: { thread_id: 'thread-failing' } };

    // Act
    const failure = await invokeWithCountersign(graph, { outcomes: [] }, config, {
      approvals,
      configurationId: 'billing-agent',
    }).catch((error: unknown) => error);
    const snapshot = await graph.getState(config);

    // Assess
    expect(failure).toMatchObject({
      code: 'unavailable',
      message: TEXTS.agentCountersignUnreachable('submit the turn', 'TypeError ECONNRESET'),
    });
    expect(snapshot.next).toEqual(['invoice']);
    expect(sent).toEqual([]);
  });
});

describe('an approver’s edited arguments', () => {
  it('OpenAI Agents SDK: rejects the call, telling the model an approver edited it, and the tool never runs', async () => {
    // Prepare
    const { approvals } = approvalsWithFakeCountersign({ submit: [SUBMITTED], poll: [EDITED_ANSWER] });
    const { agent, runner, sent, model } = openAiInvoiceAgent([
      [functionCall('send_invoice', PROPOSED, { callId: 'call_invoice' })],
      [assistantMessage('Not sent.')],
    ]);
    const first = await runner.run(agent, 'Invoice ACME.');

    // Act
    await countersignInterruptions(first, {
      approvals,
      configurationId: 'billing-agent',
      clientKey: 'turn-1',
    });
    const resumed = await runner.run(agent, first.state);

    // Assess
    expect(sent).toEqual([]);
    expect(resumed.finalOutput).toBe('Not sent.');
    expect(JSON.stringify(model.lastCall?.request.input)).toContain(TEXTS.agentCallEditedNotRunnable);
  });

  it('Vercel AI SDK: denies the call with the same message, and the SDK never runs it', async () => {
    // Prepare
    const { approvals } = approvalsWithFakeCountersign({ submit: [SUBMITTED], poll: [EDITED_ANSWER] });
    const { model, tools, sent } = aiSdkInvoiceAgent(PROPOSED, 'Not sent.');
    const messages: ModelMessage[] = [{ role: 'user', content: 'Invoice ACME.' }];
    const first = await generateText({ model, tools, messages });

    // Act
    const answered = await countersignToolApprovals(first, {
      approvals,
      configurationId: 'billing-agent',
      clientKey: 'turn-1',
    });
    messages.push(...first.response.messages, ...answered.messages);
    const second = await generateText({ model, tools, messages });

    // Assess
    expect(answered.messages[0]?.content).toEqual([
      {
        type: 'tool-approval-response',
        approvalId: expect.any(String),
        approved: false,
        reason: TEXTS.agentCallEditedNotRunnable,
      },
    ]);
    expect(sent).toEqual([]);
    expect(second.text).toBe('Not sent.');
  });

  it('LangGraph.js: the node runs the edited arguments, and reports that it ran the approver’s edit', async () => {
    // Prepare
    const { approvals, sent: requests } = approvalsWithFakeCountersign({
      submit: [SUBMITTED],
      poll: [EDITED_ANSWER],
      report: [runInStatus('decided')],
    });
    const { graph, sent } = langGraphInvoiceGraph(approvals);

    // Act
    const state = await invokeWithCountersign(
      graph,
      { outcomes: [] },
      { configurable: { thread_id: 'thread-1' } },
      { approvals, configurationId: 'billing-agent' },
    );

    // Assess
    expect(sent).toEqual([EDITED]);
    expect(state.outcomes).toEqual(['ran']);
    expect(requests.find((request) => request.path.endsWith('/report'))?.body).toEqual({
      reports: [{ index: 0, outcome: 'succeeded', detail: TEXTS.agentRanEditedArguments('approver-1') }],
    });
  });
});

describe('the LangGraph node’s calls', () => {
  it('reports a call that threw as failed and one without an executor as skipped, runs neither twice, and reports no refused call', async () => {
    // Prepare
    const { approvals, sent: requests } = approvalsWithFakeCountersign({ report: [runInStatus('decided')] });
    const approved = { decision: 'approved' as const, arguments: PROPOSED };
    const answer = {
      runId: 'run-1',
      calls: [
        { ...approved, index: 0, callId: 'call_a', tool: 'send_invoice' },
        { ...approved, index: 1, callId: 'call_b', tool: 'constructor' },
        { decision: 'rejected' as const, index: 2, callId: 'call_c', tool: 'send_invoice', reason: 'No' },
      ],
    };
    let runs = 0;

    // Act
    const outcomes = await runCountersignedCalls(
      answer,
      {
        send_invoice: () => {
          runs += 1;
          throw new Error('the billing system is down');
        },
      },
      { approvals },
    );

    // Assess: `constructor` is no executor of the record, whatever its prototype holds
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['failed', 'rejected', 'rejected']);
    expect(runs).toBe(1);
    expect(requests.map((request) => request.body)).toEqual([
      {
        reports: [
          { index: 0, outcome: 'failed' },
          { index: 1, outcome: 'skipped' },
        ],
      },
    ]);
  });
});
