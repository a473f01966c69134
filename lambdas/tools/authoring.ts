/**
 * What a team's tools module imports: `import { defineTool, type Tool, z } from 'countersign/tools'`.
 * The module exports `teamTools: Tool[]` and is named by the construct's `toolsModule` prop.
 * `z` is {@link https://zod.dev/api | zod}, re-exported so a tools module needs no zod of its own; any
 * zod 4 schema works. Its reference is zod's own: this package's documentation links to it, not a copy.
 *
 * @example
 * import { defineTool, type Tool, z } from 'countersign/tools';
 *
 * export const teamTools: Tool[] = [
 *   defineTool({
 *     name: 'close_ticket',
 *     description: 'Closes a support ticket.',
 *     effect: 'write',
 *     input: z.object({ ticketId: z.string() }),
 *     execute: async ({ ticketId }) => ({ content: `Closed ${ticketId}.`, isError: false }),
 *   }),
 * ];
 *
 * @module countersign/tools
 */
export * as z from 'zod';
export type { Grant, UserProfile } from '../core/identity.js';
export type { Page, PageMetadataPatch, PageStore } from '../core/pages.js';
export { quotePreviewValue } from '../core/previews/quote-preview-value.js';
export {
  defineTool,
  type Tool,
  type ToolContext,
  type ToolEffect,
  type ToolOutcome,
} from '../core/tools/tool.js';
