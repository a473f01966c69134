import type { DeclaredEffect } from '../../core/external-runs/external-turn.js';
import type { McpToolDescriptor } from '../../core/tools/mcp/mcp-servers.js';
import { TOOL_NAME_PATTERN } from '../../core/tools/tool.js';
import { APPROVAL_STATUS_TOOL } from './approval-status.js';

/** The most upstream tools the gateway offers: a client's model reads every one on each turn. */
export const MAX_GATEWAY_TOOLS = 100;
/** The largest input schema offered, as JSON: a schema is a contract, not a payload. */
export const MAX_TOOL_SCHEMA_BYTES = 16 * 1024;
/** A longer upstream description is cut here. */
export const MAX_TOOL_DESCRIPTION_CHARACTERS = 2_000;

/** An upstream tool as the gateway offers it, with the effect its call is submitted under. */
export interface GatewayTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
  /** `read` passes through; `write` and `unknown` wait for a person (docs/external-agents.md). */
  readonly effect: DeclaredEffect;
}

/**
 * The upstream's listing as the gateway offers it. Only a tool whose upstream says `readOnlyHint:
 * true` is a read; `false` is a write and no hint an `unknown` effect, a write that says so (the
 * rule of core/approvals/needs-human-approval.ts). A tool is left out when it could not go on a
 * card or be offered safely: a name countersign's tool names do not allow (a card names it), a
 * name listed twice (which definition holds is unknowable), a schema that is not an object schema
 * or is larger than {@link MAX_TOOL_SCHEMA_BYTES}; at most {@link MAX_GATEWAY_TOOLS} are offered.
 *
 * @example
 * offerUpstreamTools([{ name: 'lookup', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }]);
 * // [{ name: 'lookup', inputSchema: { type: 'object' }, effect: 'read' }]
 */
export function offerUpstreamTools(listed: readonly McpToolDescriptor[]): GatewayTool[] {
  const counts = new Map<string, number>();
  for (const tool of listed) counts.set(tool.name, (counts.get(tool.name) ?? 0) + 1);
  const offered: GatewayTool[] = [];
  for (const tool of listed) {
    if (offered.length >= MAX_GATEWAY_TOOLS) break;
    if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name)) continue;
    if (counts.get(tool.name) !== 1 || !isOfferableSchema(tool.inputSchema)) continue;
    // The gateway's own tool keeps its name: an upstream cannot stand in for it.
    if (tool.name === APPROVAL_STATUS_TOOL) continue;
    const description =
      typeof tool.description === 'string'
        ? tool.description.slice(0, MAX_TOOL_DESCRIPTION_CHARACTERS)
        : undefined;
    offered.push({
      name: tool.name,
      ...(description === undefined ? {} : { description }),
      inputSchema: tool.inputSchema,
      effect: effectOfAnnotations(tool.annotations),
    });
  }
  return offered;
}

/** `readOnlyHint: true` is a read, `false` a write, anything else an effect nobody confirmed. */
function effectOfAnnotations(annotations: McpToolDescriptor['annotations']): DeclaredEffect {
  if (annotations?.readOnlyHint === true) return 'read';
  return annotations?.readOnlyHint === false ? 'write' : 'unknown';
}

function isOfferableSchema(schema: unknown): schema is Record<string, unknown> {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return false;
  if ((schema as { type?: unknown }).type !== 'object') return false;
  try {
    return Buffer.byteLength(JSON.stringify(schema), 'utf8') <= MAX_TOOL_SCHEMA_BYTES;
  } catch {
    return false;
  }
}
