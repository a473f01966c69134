import {
  type CountersignApprovals,
  createCountersignApprovals,
} from '../../lambdas/agents/countersign-approvals.js';
import { eventually, type ResponseJson, type TestRuntime } from '../support/local-runtime.js';
import { decide } from './approvers-support.js';
import { machineClientOf } from './external-runs-support.js';

/** The demo agent's approvals: its typed client (token by client credentials), waits bounded for tests. */
export function demoAgentApprovals(runtime: TestRuntime): CountersignApprovals {
  return createCountersignApprovals({ api: machineClientOf(runtime), maxWaitSeconds: 60 });
}

/** The next card the demo agent's turn puts in the approver's inbox (not one of `seen`), once it appears. */
export async function nextAgentCard(runtime: TestRuntime, seen: Set<string>): Promise<ResponseJson> {
  const card = await eventually(async () => {
    const inbox: ResponseJson = (await runtime.client('approver').listInbox({ query: { limit: 100 } })).body;
    return (inbox?.cards ?? []).find(
      (candidate: ResponseJson) => candidate.owner === 'demo-agent' && !seen.has(candidate.runId),
    );
  }, 30_000);
  seen.add(card.runId);
  return card;
}

/** Decides the next card of the demo agent as a person would while the agent waits; answers the card read. */
export async function decideNextAgentCard(
  runtime: TestRuntime,
  decision: { decision: 'approve' } | { decision: 'reject'; reason?: string },
  seen: Set<string>,
): Promise<ResponseJson> {
  const card = await nextAgentCard(runtime, seen);
  const answered = await decide(runtime, card.runId, { digest: card.digest, ...decision });
  if (answered.status !== 200) throw new Error(`The decision answered ${answered.status}: ${answered.text}`);
  return card;
}
