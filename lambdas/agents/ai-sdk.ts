// Types only: importing this adapter loads no SDK (the caller's own `ai` does the work).
import type { ToolApprovalResponse, ToolModelMessage } from 'ai';
import { TEXTS } from '../core/texts.js';
import { approvalRequestOf, type CountersignAnswer, type SdkTurnOptions } from './countersign-approvals.js';

/** A `tool-approval-request` part of a generation's content, as the AI SDK gives it. */
interface ApprovalRequestPart {
  readonly type: 'tool-approval-request';
  readonly approvalId: string;
  readonly toolCall: { readonly toolCallId: string; readonly toolName: string; readonly input: unknown };
  readonly isAutomatic?: boolean;
}

/**
 * Answers a generation's tool approval requests (Vercel AI SDK: `needsApproval` tools or the
 * `toolApproval` setting) from countersign: the requests are submitted as one turn, and once it
 * is decided a `tool` message carries a `tool-approval-response` for each (a denial with its
 * reason). Append it after the generation's `response.messages` and generate again: the SDK then
 * runs the approved calls. It runs them with the model's input only, so a call whose arguments
 * an approver edited is denied, telling the model so, and not run. Any failure to get an answer
 * throws, and no response is written: nothing runs.
 *
 * @example
 * const result = await generateText({ model, tools, messages });
 * const { messages: answers } = await countersignToolApprovals(result, { approvals, configurationId: 'billing-agent', clientKey });
 * messages.push(...result.response.messages, ...answers);
 */
export async function countersignToolApprovals(
  result: { readonly content: ReadonlyArray<{ readonly type: string }> },
  options: SdkTurnOptions,
): Promise<{ answer?: CountersignAnswer; messages: ToolModelMessage[] }> {
  const requests = result.content.filter(
    (part): part is ApprovalRequestPart =>
      part.type === 'tool-approval-request' && !(part as ApprovalRequestPart).isAutomatic,
  );
  if (requests.length === 0) return { messages: [] };
  const request = approvalRequestOf(
    requests.map(({ toolCall }) => ({
      tool: toolCall.toolName,
      arguments: toolCall.input,
      callId: toolCall.toolCallId,
    })),
    options,
  );
  const answer = await options.approvals.requestApproval(request, options);
  const responses = answer.calls.map((verdict, index): ToolApprovalResponse => {
    const approvalId = (requests[index] as ApprovalRequestPart).approvalId;
    if (verdict.decision === 'rejected') {
      return {
        type: 'tool-approval-response',
        approvalId,
        approved: false,
        reason: TEXTS.agentCallRejected(verdict.reason),
      };
    }
    if (verdict.edited) {
      return {
        type: 'tool-approval-response',
        approvalId,
        approved: false,
        reason: TEXTS.agentCallEditedNotRunnable,
      };
    }
    return { type: 'tool-approval-response', approvalId, approved: true };
  });
  return { answer, messages: [{ role: 'tool', content: responses }] };
}
