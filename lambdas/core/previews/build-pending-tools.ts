import { safeParse } from 'zod/mini';
import { describeErrorClass } from '../errors.js';
import type { UserProfile } from '../identity.js';
import type { Logger } from '../ports.js';
import type { ApprovalCard } from '../runs/approval-card.js';
import { TEXTS } from '../texts.js';
import { needsApproval, type ToolContext, type ToolRegistry } from '../tools/tool.js';
import { readGatePagesFor } from './read-gate-pages.js';

export type PreviewView =
  | { status: 'shown'; lines: string[]; caveat: string }
  | { status: 'failed'; lines: string[]; message: string }
  | { status: 'withheld'; message: string }
  | { status: 'none'; message: string };

/** One pending call as every surface shows it. */
export interface PendingToolView {
  index: number;
  tool: string;
  arguments: unknown;
  /** Whether the tool is still registered in this deployment. */
  registered: boolean;
  requiresApproval: boolean;
  preview: PreviewView;
}

/**
 * THE helper that turns a card into the pending calls a viewer sees, for every surface: the
 * inbox JSON, the inbox page, GET /runs/{id} and the `awaiting_approval` event (seed 000).
 *
 * The read gate (seed 000, "at reading"): a stored preview is shown only when its tool,
 * asked with `mayViewerReadPreview`, says this viewer may read it. It fails closed when there
 * is no viewer, the tool is no longer registered, or the tool has no preview contract: the
 * persisted preview outlives the registration that produced it.
 *
 * The gate's page reads go through {@link readGatePagesFor}: the reads of every card a viewer's
 * render asks for in one turn of the event loop become one batched read, reused for that
 * viewer for a bounded time. Build the cards of one render concurrently to get one batch.
 */
export async function buildPendingTools(input: {
  card: ApprovalCard;
  viewer: UserProfile | undefined;
  tools: ToolRegistry;
  context: Omit<ToolContext, 'actingUser'>;
  logger: Logger;
}): Promise<PendingToolView[]> {
  const previews = new Map((input.card.callPreviews ?? []).map((preview) => [preview.index, preview]));
  return Promise.all(
    input.card.pendingCalls.map(async (call): Promise<PendingToolView> => {
      const tool = input.tools.get(call.tool);
      const base = {
        index: call.index,
        tool: call.tool,
        arguments: call.arguments,
        registered: tool !== undefined,
        requiresApproval: tool ? needsApproval(tool) : true,
      };
      const preview = previews.get(call.index);
      if (!preview) return { ...base, preview: { status: 'none', message: TEXTS.noPreview } };
      if (preview.failed) {
        return { ...base, preview: { status: 'failed', lines: preview.lines, message: TEXTS.previewFailed } };
      }
      const mayRead = await mayViewerRead(input, call.arguments, call.tool);
      if (!mayRead) return { ...base, preview: { status: 'withheld', message: TEXTS.previewWithheld } };
      return { ...base, preview: { status: 'shown', lines: preview.lines, caveat: TEXTS.previewCaveat } };
    }),
  );
}

async function mayViewerRead(
  input: {
    viewer: UserProfile | undefined;
    tools: ToolRegistry;
    context: Omit<ToolContext, 'actingUser'>;
    logger: Logger;
  },
  rawArguments: unknown,
  toolName: string,
): Promise<boolean> {
  const tool = input.tools.get(toolName);
  if (!input.viewer || !tool || typeof tool.mayViewerReadPreview !== 'function') return false;
  const parsed = safeParse(tool.input, rawArguments);
  if (!parsed.success) return false;
  try {
    return (
      (await tool.mayViewerReadPreview(parsed.data, input.viewer, {
        ...input.context,
        pages: readGatePagesFor(input.context.pages, input.viewer),
        actingUser: input.viewer,
      })) === true
    );
  } catch (error) {
    input.logger.warn('preview read gate failed', { tool: toolName, errorClass: describeErrorClass(error) });
    return false;
  }
}
