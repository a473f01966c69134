// Types only: importing this adapter loads no SDK (the caller's own `ai` does the work).
import type { ToolApprovalResponse, ToolModelMessage } from 'ai';
import { TEXTS } from '../core/texts.js';
import type {
  ApprovalRequest,
  CountersignAnswer,
  CountersignApprovals,
  ProposedCall,
  WaitOptions,
} from './countersign-approvals.js';

/** A `tool-approval-request` part of a generation's content, as the AI SDK gives it. */
interface ApprovalRequestPart {
  readonly type: 'tool-approval-request';
  readonly approvalId: string;
  readonly toolCall: { readonly toolCallId: string; readonly toolName: string; readonly input: unknown };
  readonly isAutomatic?: boolean;
}

export interface AiSdkApprovalOptions extends WaitOptions {
  readonly approvals: CountersignApprovals;
  /** The configuration whose policy the turn is decided under. */
  readonly configurationId: string;
  /** One per turn, stable across retries of it (e.g. your chat id and step number). */
  readonly clientKey: string;
  /** What the turn is for, shown on the card. */
  readonly summary?: string;
  /** A tool whose effect you have not confirmed is shown so. @default - every tool is a `write` */
  readonly effects?: Readonly<Record<string, 'write' | 'unknown'>>;
  /** Lines you computed to preview a call, flagged on the card as supplied by the caller. */
  readonly previewOf?: (call: { tool: string; arguments: unknown }) => readonly string[] | undefined;
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
  options: AiSdkApprovalOptions,
): Promise<{ answer?: CountersignAnswer; messages: ToolModelMessage[] }> {
  const requests = result.content.filter(
    (part): part is ApprovalRequestPart =>
      part.type === 'tool-approval-request' && !(part as ApprovalRequestPart).isAutomatic,
  );
  if (requests.length === 0) return { messages: [] };
  const calls = requests.map(({ toolCall }): ProposedCall => {
    const preview = options.previewOf?.({ tool: toolCall.toolName, arguments: toolCall.input });
    return {
      tool: toolCall.toolName,
      arguments: toolCall.input,
      callId: toolCall.toolCallId,
      ...(preview === undefined ? {} : { preview }),
    };
  });
  const request: ApprovalRequest = {
    configurationId: options.configurationId,
    clientKey: options.clientKey,
    ...(options.summary === undefined ? {} : { summary: options.summary }),
    tools: [...new Set(calls.map((call) => call.tool))].map((name) => ({
      name,
      effect: options.effects?.[name] ?? 'write',
    })),
    calls,
  };
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
