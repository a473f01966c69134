import { cardPageUrl } from '../../contract/card-address.js';
import { TEXTS } from '../../core/texts.js';
import { answerOf } from './approval-wait.js';
import type { GatewayCallDependencies, GatewayToolResult } from './gateway-call.js';

/** The gateway's own tool: how a call that waited stands, without running or resubmitting it. */
export const APPROVAL_STATUS_TOOL = 'countersign_approval_status';

/** The status tool as `tools/list` offers it: a read, one argument. */
export const APPROVAL_STATUS_TOOL_LISTING = {
  name: APPROVAL_STATUS_TOOL,
  description: TEXTS.mcpGatewayStatusToolDescription,
  inputSchema: {
    type: 'object' as const,
    properties: { runId: { type: 'string', minLength: 1, maxLength: 200 } },
    required: ['runId'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true },
};

/**
 * Reads the run a "waiting for approval" answer named (`GET /external-runs/{id}`, no wait) and
 * says how it stands. Only the gateway's machine client's runs are found (the API answers 404 for
 * any other). It never runs a call: the same tool called again does, once approved.
 *
 * @example
 * await readApprovalStatus(dependencies, { runId: '01J…' }); // "Run 01J… waits for approval: card …"
 */
export async function readApprovalStatus(
  dependencies: Pick<GatewayCallDependencies, 'api' | 'settings'>,
  args: Record<string, unknown>,
): Promise<GatewayToolResult> {
  const runId = args.runId;
  if (typeof runId !== 'string' || !/^[\w-]{1,200}$/.test(runId)) {
    return failed(TEXTS.mcpGatewayStatusNotFound(String(runId).slice(0, 200)));
  }
  let polled: Awaited<ReturnType<GatewayCallDependencies['api']['getExternalRun']>>;
  try {
    polled = await dependencies.api.getExternalRun({ path: { id: runId }, query: { wait: 0 } });
  } catch {
    return failed(TEXTS.mcpGatewayApprovalUnavailable);
  }
  if (polled.status === 404) return failed(TEXTS.mcpGatewayStatusNotFound(runId));
  if (!polled.ok) return failed(TEXTS.mcpGatewayApprovalUnavailable);
  const answer = answerOf(runId, polled.body, {});
  const card = cardPageUrl(`${dependencies.settings.inboxUrl}/`, runId);
  switch (answer.kind) {
    case 'waiting':
      return read(TEXTS.mcpGatewayStatusPending(runId, card));
    case 'approved':
      return read(TEXTS.mcpGatewayStatusApproved(runId));
    case 'already-run':
      return read(TEXTS.mcpGatewayStatusRan(runId, answer.outcome));
    case 'rejected':
      return read(TEXTS.mcpGatewayStatusRejected(runId, answer.reason));
    case 'not-decided':
      return read(TEXTS.mcpGatewayStatusEnded(runId, answer.status, answer.reason));
    default:
      return failed(TEXTS.mcpGatewayApprovalUnavailable);
  }
}

function read(text: string): GatewayToolResult {
  return { content: [{ type: 'text', text }] };
}

function failed(text: string): GatewayToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
