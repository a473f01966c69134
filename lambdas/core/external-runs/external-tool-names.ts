import { type AccessList, allows } from '../identity.js';

/**
 * The separator between an external run's configuration and its tool in the name a card, a gate
 * and an approver's `toolAccess` use (`billing-agent/send_invoice`). No model, team or MCP tool
 * name can hold it (TOOL_NAME_PATTERN), so an external tool never resolves to one of ours, and
 * authority over ours never covers it.
 */
export const EXTERNAL_TOOL_SEPARATOR = '/';

/**
 * The name of an external tool wherever countersign shows or checks it.
 *
 * @example
 * externalToolName('billing-agent', 'send_invoice'); // 'billing-agent/send_invoice'
 */
export function externalToolName(configurationId: string, tool: string): string {
  return `${configurationId}${EXTERNAL_TOOL_SEPARATOR}${tool}`;
}

/** True for a name {@link externalToolName} made. */
export function isExternalToolName(name: string): boolean {
  return name.includes(EXTERNAL_TOOL_SEPARATOR);
}

/** The caller's own name of an external tool (what follows the configuration). */
export function callerToolName(name: string): string {
  return name.slice(name.indexOf(EXTERNAL_TOOL_SEPARATOR) + 1);
}

/**
 * Tool-level authority over `tool` (the decision gate's rule): `*`, the tool's exact name, or for
 * an external tool `<configuration>/*`, every tool the agents of that configuration declare (an
 * admin cannot know them all beforehand). A wildcard never reaches past its configuration, and
 * none reaches a tool of ours.
 *
 * @example
 * allowsTool(['billing-agent/*'], 'billing-agent/send_invoice'); // true
 * allowsTool(['billing-agent/*'], 'update_page_metadata'); // false
 */
export function allowsTool(toolAccess: AccessList, tool: string): boolean {
  if (allows(toolAccess, tool)) return true;
  if (toolAccess === '*' || !isExternalToolName(tool)) return false;
  return toolAccess.includes(
    `${tool.slice(0, tool.indexOf(EXTERNAL_TOOL_SEPARATOR))}${EXTERNAL_TOOL_SEPARATOR}*`,
  );
}
