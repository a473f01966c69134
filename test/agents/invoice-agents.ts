import { Agent, tool as agentTool, Runner } from '@openai/agents';
import { ScriptedModel } from '@openai/agents/testing';
import { tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import * as z from 'zod';

/*
 * One invoice tool that needs approval, in each SDK's own terms, with that SDK's own scripted
 * model (no network): what the adapters' unit and end-to-end tests drive.
 */

const invoiceInput = z.object({ customer: z.string(), amountCents: z.number() });

/** An OpenAI Agents SDK agent with a `needsApproval` invoice tool, its model scripted; `sent` holds each run. */
export function openAiInvoiceAgent(script: ConstructorParameters<typeof ScriptedModel>[0]) {
  const sent: unknown[] = [];
  const model = new ScriptedModel(script);
  const sendInvoice = agentTool({
    name: 'send_invoice',
    description: 'Sends an invoice.',
    parameters: invoiceInput,
    needsApproval: true,
    execute: async (input) => {
      sent.push(input);
      return `Invoice to ${input.customer} sent.`;
    },
  });
  const agent = new Agent({ name: 'billing', instructions: 'Bill customers.', model, tools: [sendInvoice] });
  return { agent, runner: new Runner({ tracingDisabled: true }), sent, model };
}

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/**
 * The AI SDK's mock model (a call of send_invoice with `input`, then `closing` as text) and a
 * `needsApproval` invoice tool; `sent` holds each run.
 */
export function aiSdkInvoiceAgent(input: Record<string, unknown>, closing: string) {
  const sent: unknown[] = [];
  const model = new MockLanguageModelV4({
    doGenerate: [
      {
        content: [
          {
            type: 'tool-call',
            toolCallId: 'call_invoice',
            toolName: 'send_invoice',
            input: JSON.stringify(input),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage: USAGE,
        warnings: [],
      },
      {
        content: [{ type: 'text', text: closing }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: USAGE,
        warnings: [],
      },
    ],
  });
  const tools = {
    send_invoice: tool({
      description: 'Sends an invoice.',
      inputSchema: invoiceInput,
      needsApproval: true,
      execute: async (input) => {
        sent.push(input);
        return 'sent';
      },
    }),
  };
  return { model, tools, sent };
}
