import { randomUUID } from 'node:crypto';
import { generateText, type ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { countersignToolApprovals } from '../../lambdas/agents/ai-sdk.js';
import { type CountersignAnswer, reportsByCallId } from '../../lambdas/agents/countersign-approvals.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import { aiSdkInvoiceAgent } from '../agents/invoice-agents.js';
import { bodyOf } from '../support/api-answers.js';
import { useTestRuntime } from '../support/local-runtime.js';
import { decideNextAgentCard, demoAgentApprovals } from './agent-adapters-support.js';
import { machineClientOf } from './external-runs-support.js';

/**
 * The Vercel AI SDK's own tool approval (`needsApproval`, `tool-approval-request`, a
 * `tool-approval-response` in the next call's messages), with its mock model (no network), the
 * responses written from a countersign card an approver decides on the embedded runtime.
 */
describe('the Vercel AI SDK adapter', () => {
  const runtime = useTestRuntime();
  const seen = new Set<string>();

  async function generateWithCountersign(
    decision: { decision: 'approve' } | { decision: 'reject'; reason: string },
  ) {
    const { model, tools, sent } = aiSdkInvoiceAgent({ customer: 'ACME', amountCents: 120_000 }, 'Done.');
    const messages: ModelMessage[] = [{ role: 'user', content: 'Invoice ACME for March.' }];
    const first = await generateText({ model, tools, messages });
    const approver = decideNextAgentCard(runtime, decision, seen);
    const approvals = demoAgentApprovals(runtime);
    const answered = await countersignToolApprovals(first, {
      approvals,
      configurationId: 'demo-external',
      clientKey: randomUUID(),
    });
    const card = await approver;
    messages.push(...first.response.messages, ...answered.messages);
    // What ran: each tool execution the SDK ends, as it ends it.
    const ran: Array<{ callId: string; outcome: 'succeeded' | 'failed' }> = [];
    const second = await generateText({
      model,
      tools,
      messages,
      onToolExecutionEnd: ({ toolOutput }) => {
        ran.push({
          callId: toolOutput.toolCallId,
          outcome: toolOutput.type === 'tool-result' ? 'succeeded' : 'failed',
        });
      },
    });
    const reports = reportsByCallId(answered.answer as CountersignAnswer, ran);
    if (reports.length > 0) await approvals.reportExecution(card.runId, reports);
    const run = bodyOf(await machineClientOf(runtime).getExternalRun({ path: { id: card.runId } }));
    return { first, answered, card, second, sent, model, run };
  }

  it('answers the approval request from the decision, after which the SDK runs the call', async () => {
    // Act
    const { first, answered, card, second, sent, run } = await generateWithCountersign({
      decision: 'approve',
    });

    // Assess
    expect(first.content.filter((part) => part.type === 'tool-approval-request')).toHaveLength(1);
    expect(card.pendingTools[0]).toMatchObject({
      tool: 'demo-external/send_invoice',
      arguments: { customer: 'ACME', amountCents: 120_000 },
    });
    expect(answered.messages).toEqual([
      {
        role: 'tool',
        content: [{ type: 'tool-approval-response', approvalId: expect.any(String), approved: true }],
      },
    ]);
    expect(sent).toEqual([{ customer: 'ACME', amountCents: 120_000 }]);
    expect(second.text).toBe('Done.');
    expect(run.reports).toEqual([
      { index: 0, outcome: 'succeeded', approved: true, reportedAt: expect.any(String) },
    ]);
  });

  it('denies a call the approver refused, with the reason, and the SDK never runs it', async () => {
    // Act
    const { answered, second, sent, model, run } = await generateWithCountersign({
      decision: 'reject',
      reason: 'Not this month',
    });

    // Assess
    expect(answered.answer?.calls.map((call) => call.decision)).toEqual(['rejected']);
    expect(sent).toEqual([]);
    expect(run.reports).toEqual([]);
    expect(second.text).toBe('Done.');
    expect(JSON.stringify(model.doGenerateCalls.at(-1)?.prompt)).toContain(
      TEXTS.agentCallRejected('Not this month'),
    );
  });
});
