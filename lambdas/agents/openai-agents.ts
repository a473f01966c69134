// Types only: importing this adapter loads no SDK (the caller's own @openai/agents does the work).
import type { RunToolApprovalItem } from '@openai/agents';
import { CountersignError } from '../core/errors.js';
import { TEXTS } from '../core/texts.js';
import {
  approvalRequestOf,
  type CountersignAnswer,
  type ProposedCall,
  type SdkTurnOptions,
} from './countersign-approvals.js';

/** What the adapter needs of a run's state: the SDK's `RunState` has both methods. */
export interface ApprovableRunState {
  approve(item: RunToolApprovalItem): void;
  reject(item: RunToolApprovalItem, options?: { message?: string }): void;
}

/**
 * Answers a run's tool approvals from countersign (OpenAI Agents SDK, `needsApproval` tools): the
 * run's interruptions are submitted as one turn, and once it is decided each is approved or
 * rejected on the run's state (a rejection tells the model why); resume with `run(agent,
 * result.state)`. The SDK runs an approved call with the model's arguments only, so a call whose
 * arguments an approver edited is rejected, telling the model so, and not run. Any failure to get
 * an answer throws and leaves every interruption undecided: nothing runs.
 *
 * @example
 * let result = await run(agent, input);
 * while (result.interruptions.length > 0) {
 *   await countersignInterruptions(result, { approvals, configurationId: 'billing-agent', clientKey: `${conversationId}-${turn++}` });
 *   result = await run(agent, result.state);
 * }
 */
export async function countersignInterruptions(
  result: { readonly interruptions: readonly RunToolApprovalItem[]; readonly state: ApprovableRunState },
  options: SdkTurnOptions,
): Promise<CountersignAnswer | undefined> {
  const items = result.interruptions;
  if (items.length === 0) return undefined;
  const request = approvalRequestOf(
    items.map((item, index) => proposedCallOf(item, index)),
    options,
  );
  const answer = await options.approvals.requestApproval(request, options);
  answer.calls.forEach((verdict, index) => {
    const item = items[index] as RunToolApprovalItem;
    if (verdict.decision === 'rejected') {
      result.state.reject(item, { message: TEXTS.agentCallRejected(verdict.reason) });
    } else if (verdict.edited) {
      result.state.reject(item, { message: TEXTS.agentCallEditedNotRunnable });
    } else {
      result.state.approve(item);
    }
  });
  return answer;
}

/** A function tool's call as the turn carries it; any other kind of approval is refused, unanswered. */
function proposedCallOf(item: RunToolApprovalItem, index: number): ProposedCall {
  const raw = item.rawItem;
  if (raw.type !== 'function_call') {
    throw new CountersignError(
      'bad-request',
      TEXTS.agentTurnInvalid(
        `interruptions[${index}]: a ${raw.type} approval; this adapter answers function tools only`,
      ),
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.arguments);
  } catch {
    throw new CountersignError(
      'bad-request',
      TEXTS.agentTurnInvalid(`interruptions[${index}].arguments: not JSON`),
    );
  }
  return { tool: raw.name, arguments: parsed, callId: raw.callId };
}
