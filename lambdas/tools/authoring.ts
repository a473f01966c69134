/**
 * What a team's tools module imports: `import { defineTool, type Tool, z } from 'countersign/tools'`.
 * The module exports `teamTools: Tool[]` and is named by the construct's `toolsModule` prop.
 * `z` is {@link https://zod.dev/api | zod}, re-exported so a tools module needs no zod of its own; any
 * zod 4 schema works. Its reference is zod's own: this package's documentation links to it, not a copy.
 *
 * Every call a tool runs gets `context.idempotencyKey` (the run, turn and call: the same for
 * every attempt at that call). A tool whose backend can refuse a key it already applied passes
 * it on and declares `idempotent: true`; a call whose earlier attempt never reported back is
 * then run again with its key, and otherwise not run again (at most once). A tool throws
 * `TransientToolError` when a call failed for now and applied nothing: it is tried again, with
 * backoff, a few times, before it ends "not applied" (docs/runbook.md, "Exactly once").
 *
 * @example
 * import { defineTool, type Tool, TransientToolError, z } from 'countersign/tools';
 *
 * export const teamTools: Tool[] = [
 *   defineTool({
 *     name: 'close_ticket',
 *     description: 'Closes a support ticket.',
 *     effect: 'write',
 *     idempotent: true,
 *     input: z.object({ ticketId: z.string() }),
 *     execute: async ({ ticketId }, { idempotencyKey }) => {
 *       const answer = await tickets.close(ticketId, { idempotencyKey });
 *       if (answer.status === 503) throw new TransientToolError('The ticket service is busy.');
 *       return { content: `Closed ${ticketId}.`, isError: false };
 *     },
 *   }),
 * ];
 *
 * @module countersign/tools
 */
export * as z from 'zod';
export type { Grant, UserProfile } from '../core/identity.js';
export type {
  Page,
  PageExpectation,
  PageMetadataPatch,
  PageMetadataWrite,
  PageStore,
  PageWriteOutcome,
} from '../core/pages.js';
export { quotePreviewValue } from '../core/previews/quote-preview-value.js';
export {
  defineTool,
  type Tool,
  type ToolContext,
  type ToolEffect,
  type ToolExecutionContext,
  type ToolOutcome,
} from '../core/tools/tool.js';
export { isTransientToolError, TransientToolError } from '../core/tools/transient-tool-error.js';
