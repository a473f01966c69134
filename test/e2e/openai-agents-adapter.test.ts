import { randomUUID } from 'node:crypto';
import { assistantMessage, functionCall } from '@openai/agents/testing';
import { describe, expect, it } from 'vitest';
import { type CountersignAnswer, reportsByCallId } from '../../lambdas/agents/countersign-approvals.js';
import { countersignInterruptions } from '../../lambdas/agents/openai-agents.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { openAiInvoiceAgent } from '../agents/invoice-agents.js';
import { bodyOf } from '../support/api-answers.js';
import { useTestRuntime } from '../support/local-runtime.js';
import { decideNextAgentCard, demoAgentApprovals } from './agent-adapters-support.js';
import { machineClientOf } from './external-runs-support.js';

/**
 * The OpenAI Agents SDK's own loop with a `needsApproval` tool, its model the SDK's ScriptedModel
 * (no network, tracing off), its interruptions answered from a countersign card an approver decides
 * on the embedded runtime.
 */
describe('the OpenAI Agents SDK adapter', () => {
  const runtime = useTestRuntime();
  const seen = new Set<string>();

  it('submits the interruptions as one card, approves each from the decision and resumes the run, which runs the call', async () => {
    // Prepare
    const { agent, runner, sent } = openAiInvoiceAgent([
      [functionCall('send_invoice', { customer: 'ACME', amountCents: 120_000 }, { callId: 'call_invoice' })],
      [assistantMessage('Invoiced ACME.')],
    ]);
    const first = await runner.run(agent, 'Invoice ACME for March.');
    const interrupted = first.interruptions.map((item) => item.name);

    // Act
    const approver = decideNextAgentCard(runtime, { decision: 'approve' }, seen);
    const approvals = demoAgentApprovals(runtime);
    const answer = await countersignInterruptions(first, {
      approvals,
      configurationId: 'demo-external',
      clientKey: randomUUID(),
      summary: 'Invoice ACME for March.',
      previewOf: ({ arguments: input }) => [`Invoice to ${(input as { customer: string }).customer}`],
    });
    const card = await approver;
    const resumed = await runner.run(agent, first.state);
    // What ran: the output items of calls the SDK executed (a rejection's output is not one).
    const ran = resumed.newItems.flatMap((item) =>
      item.type === 'tool_call_output_item' && item.executionStatus === 'executed'
        ? [{ callId: item.rawItem.callId, outcome: 'succeeded' as const }]
        : [],
    );
    await approvals.reportExecution(card.runId, reportsByCallId(answer as CountersignAnswer, ran));
    const run = bodyOf(await machineClientOf(runtime).getExternalRun({ path: { id: card.runId } }));

    // Assess
    expect(interrupted).toEqual(['send_invoice']);
    expect(card.pendingTools[0]).toMatchObject({
      tool: 'demo-external/send_invoice',
      requiresApproval: true,
      arguments: { customer: 'ACME', amountCents: 120_000 },
      preview: { suppliedBy: 'caller', lines: ['"Invoice to ACME"'] },
    });
    expect(answer?.calls).toEqual([
      {
        decision: 'approved',
        index: 0,
        callId: 'call_invoice',
        tool: 'send_invoice',
        arguments: { customer: 'ACME', amountCents: 120_000 },
      },
    ]);
    expect(sent).toEqual([{ customer: 'ACME', amountCents: 120_000 }]);
    expect(resumed.interruptions).toEqual([]);
    expect(resumed.finalOutput).toBe('Invoiced ACME.');
    expect(run.reports).toEqual([
      { index: 0, outcome: 'succeeded', approved: true, reportedAt: expect.any(String) },
    ]);
  });

  it('rejects an interruption the approver refused, tells the model the reason, and never runs the tool', async () => {
    // Prepare
    const { agent, runner, sent, model } = openAiInvoiceAgent([
      [functionCall('send_invoice', { customer: 'ACME', amountCents: 990_000 }, { callId: 'call_big' })],
      [assistantMessage('Not invoiced.')],
    ]);
    const first = await runner.run(agent, 'Invoice ACME for everything.');

    // Act
    const approver = decideNextAgentCard(runtime, { decision: 'reject', reason: 'Wrong amount' }, seen);
    const answer = await countersignInterruptions(first, {
      approvals: demoAgentApprovals(runtime),
      configurationId: 'demo-external',
      clientKey: randomUUID(),
    });
    await approver;
    const resumed = await runner.run(agent, first.state);
    const executed = resumed.newItems.filter(
      (item) => item.type === 'tool_call_output_item' && item.executionStatus === 'executed',
    );

    // Assess: the model's next request carries the rejection as the call's output
    expect(answer?.calls.map((call) => call.decision)).toEqual(['rejected']);
    expect(sent).toEqual([]);
    expect(executed).toEqual([]);
    expect(resumed.finalOutput).toBe('Not invoiced.');
    expect(JSON.stringify(model.lastCall?.request.input)).toContain(TEXTS.agentCallRejected('Wrong amount'));
  });
});
