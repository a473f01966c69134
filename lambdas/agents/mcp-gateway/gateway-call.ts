import { createHash } from 'node:crypto';
import type { ApiClient } from '../../contract/api-client.js';
import { cardPageUrl } from '../../contract/card-address.js';
import { canonicalJson } from '../../core/canonical-json.js';
import type { DeclaredEffect } from '../../core/external-runs/external-turn.js';
import { TEXTS } from '../../core/texts.js';
import type { McpServerConfiguration } from '../../core/tools/mcp/mcp-server-configuration.js';
import type { McpServers } from '../../core/tools/mcp/mcp-servers.js';
import { type ApprovalAnswer, submitAndAwaitApproval } from './approval-wait.js';
import type { GatewayCallLedger } from './gateway-call-ledger.js';
import { offerUpstreamTools } from './upstream-tools.js';

/** A tool result as MCP carries it: text content, and whether it reports an error. */
export type GatewayToolResult = {
  content: Array<{ type: 'text'; text: string }>;
  isError?: boolean;
};

export interface GatewayCallSettings {
  /** The configuration every call is submitted under: its policy decides who approves. */
  readonly configurationId: string;
  /** Where a card is read: `<inboxUrl>/inbox/runs/<run id>`. */
  readonly inboxUrl: string;
  /** How long one call waits for a decision before it answers "waiting for approval". */
  readonly waitMs: number;
  /** The longest long poll; progress goes out after each (at most 25 s). */
  readonly pollSeconds: number;
  /** The largest arguments accepted, in bytes of JSON. */
  readonly maxArgumentBytes: number;
  /** Whether approvers may edit a call's arguments before they approve it. */
  readonly allowEdits: boolean;
}

export interface GatewayCallDependencies {
  readonly api: ApiClient;
  readonly upstream: McpServers;
  readonly server: McpServerConfiguration;
  readonly settings: GatewayCallSettings;
  readonly ledger: GatewayCallLedger;
  readonly now: () => number;
}

/**
 * One `tools/call` through the gateway (docs/external-agents.md#mcp-approval-gateway). The tool's
 * effect is what the upstream lists now: a read passes through; anything else, a listing that
 * failed included, is submitted as an external run and runs on the upstream only once approved.
 * Nothing reaches the upstream for a write without an approval on record (fail closed).
 *
 * @example
 * const result = await callThroughGateway(dependencies, { tool: 'create_ticket', arguments: { title: 'Printer' } });
 */
export async function callThroughGateway(
  dependencies: GatewayCallDependencies,
  call: { readonly tool: string; readonly arguments: Record<string, unknown> },
  caller: {
    /** Sends a progress notification, when the client gave a progress token. */
    readonly progress?: (message: string) => Promise<void>;
    /** Aborted when the client cancels the call or goes away. */
    readonly signal?: AbortSignal;
  } = {},
): Promise<GatewayToolResult> {
  const { settings, upstream, server } = dependencies;
  const { progress, signal } = caller;
  if (Buffer.byteLength(JSON.stringify(call.arguments), 'utf8') > settings.maxArgumentBytes) {
    return errorResult(TEXTS.mcpGatewayArgumentsTooLarge(settings.maxArgumentBytes));
  }
  const effect = await establishEffect(dependencies, call.tool);
  if (effect === 'not-listed') return errorResult(TEXTS.mcpGatewayUnknownTool(call.tool));
  if (effect === 'read') {
    try {
      const answered = await upstream.callTool(server, call.tool, call.arguments);
      return textResult(answered.text, answered.isError);
    } catch {
      return errorResult(TEXTS.mcpGatewayReadUnavailable(call.tool));
    }
  }
  // The effect is part of the call: a tool whose listing changed asks anew (the same key for another
  // turn would be refused), never under an approval given for less.
  const identity = createHash('sha256')
    .update(
      canonicalJson([
        settings.configurationId,
        server.url,
        settings.allowEdits,
        call.tool,
        effect,
        call.arguments,
      ]),
    )
    .digest('hex');
  const result = await dependencies.ledger.once(identity, async (clientKey) => {
    const answer = await submitAndAwaitApproval(
      dependencies.api,
      {
        configurationId: settings.configurationId,
        clientKey,
        tool: call.tool,
        effect,
        editable: settings.allowEdits,
        arguments: call.arguments,
        summary: TEXTS.mcpGatewaySummary(call.tool),
      },
      {
        deadline: dependencies.now() + settings.waitMs,
        pollSeconds: settings.pollSeconds,
        now: dependencies.now,
        ...(progress
          ? { onPending: (runId: string) => progress(TEXTS.mcpGatewayWaitingProgress(runId)) }
          : {}),
        ...(signal ? { signal } : {}),
      },
    );
    if (isFinal(answer)) dependencies.ledger.settle(identity);
    return resultOfAnswer(dependencies, call.tool, answer);
  });
  return result === 'busy' ? errorResult(TEXTS.mcpGatewayBusy(dependencies.ledger.maxWaiting)) : result;
}

/** The effect as the upstream lists it now; a listing that fails is an effect nobody confirmed. */
async function establishEffect(
  dependencies: GatewayCallDependencies,
  tool: string,
): Promise<DeclaredEffect | 'not-listed'> {
  let listed: Awaited<ReturnType<McpServers['listTools']>>;
  try {
    listed = await dependencies.upstream.listTools(dependencies.server);
  } catch {
    return 'unknown';
  }
  return offerUpstreamTools(listed).find((offered) => offered.name === tool)?.effect ?? 'not-listed';
}

function isFinal(answer: ApprovalAnswer): boolean {
  return ['approved', 'already-run', 'rejected', 'not-decided'].includes(answer.kind);
}

async function resultOfAnswer(
  dependencies: GatewayCallDependencies,
  tool: string,
  answer: ApprovalAnswer,
): Promise<GatewayToolResult> {
  switch (answer.kind) {
    case 'approved':
      return runApproved(dependencies, tool, answer);
    case 'already-run':
      return textResult(TEXTS.mcpGatewayAlreadyRun(tool, answer.runId, answer.outcome), false);
    case 'rejected':
      return errorResult(TEXTS.mcpGatewayRejected(tool, answer.reason));
    case 'not-decided':
      return errorResult(TEXTS.mcpGatewayNotDecided(tool, answer.status, answer.reason));
    case 'waiting': {
      const card = cardPageUrl(`${dependencies.settings.inboxUrl}/`, answer.runId);
      return textResult(TEXTS.mcpGatewayWaiting(tool, answer.runId, card), false);
    }
    case 'refused':
      return errorResult(TEXTS.mcpGatewayApprovalRefused(answer.status, answer.message));
    case 'unavailable':
      return errorResult(TEXTS.mcpGatewayApprovalUnavailable);
  }
}

/** The approved call, once, on the upstream; then what happened is reported for the audit. */
async function runApproved(
  dependencies: GatewayCallDependencies,
  tool: string,
  approved: Extract<ApprovalAnswer, { kind: 'approved' }>,
): Promise<GatewayToolResult> {
  let result: GatewayToolResult;
  try {
    const answered = await dependencies.upstream.callTool(dependencies.server, tool, approved.arguments);
    result = textResult(answered.text, answered.isError);
  } catch {
    result = errorResult(TEXTS.mcpGatewayUpstreamUnavailable(tool));
  }
  // A report that does not arrive loses the audit line, not the result the client waits for.
  await dependencies.api
    .reportExternalExecution({
      path: { id: approved.runId },
      body: { reports: [{ index: 0, outcome: result.isError ? 'failed' : 'succeeded' }] },
    })
    .catch(() => undefined);
  if (approved.editedBy === undefined) return result;
  // The model must know it ran other arguments than it sent.
  const note = TEXTS.mcpGatewayEdited(tool, approved.editedBy, JSON.stringify(approved.arguments));
  return { ...result, content: [{ type: 'text', text: note }, ...result.content] };
}

function textResult(text: string, isError: boolean): GatewayToolResult {
  return { content: [{ type: 'text', text }], ...(isError ? { isError: true } : {}) };
}

function errorResult(text: string): GatewayToolResult {
  return textResult(text, true);
}
