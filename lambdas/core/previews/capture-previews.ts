import { safeParse } from 'zod/mini';
import { describeErrorClass } from '../errors.js';
import type { UserProfile } from '../identity.js';
import type { Logger } from '../ports.js';
import type { CallPreview } from '../runs/approval-card.js';
import type { PendingCall } from '../runs/run-state.js';
import type { Tool, ToolContext, ToolRegistry } from '../tools/tool.js';
import { boundPreviewLines } from './bound-preview-lines.js';

/** How long one preview may take before it becomes a failed line. */
export const DEFAULT_PREVIEW_TIME_BUDGET_MS = 2_000;

class PreviewTimeout extends Error {
  public constructor() {
    super('The preview did not finish within its time budget.');
    this.name = 'PreviewTimeout';
  }
}

class EmptyPreview extends Error {
  public constructor() {
    super('The preview returned no lines.');
    this.name = 'EmptyPreview';
  }
}

/**
 * The approval scan's preview step (seed 000). For every OFFERED call of the suspending turn
 * whose tool implements `preview`, produce its lines under the run's acting user, all calls
 * concurrently, each within a time budget. A throw, a timeout or an empty result becomes one
 * line flagged `failed` that names only the error class; the error itself goes to the log
 * (class only: its text can carry credentials).
 */
export async function capturePreviews(input: {
  calls: readonly PendingCall[];
  tools: ToolRegistry;
  actingUser: UserProfile;
  context: ToolContext;
  logger: Logger;
  timeBudgetMs?: number;
}): Promise<CallPreview[]> {
  const budget = input.timeBudgetMs ?? DEFAULT_PREVIEW_TIME_BUDGET_MS;
  const previewing = input.calls
    .map((call) => ({ call, tool: input.tools.get(call.tool) }))
    .filter(
      (entry): entry is { call: PendingCall; tool: Tool } =>
        entry.call.offered && typeof entry.tool?.preview === 'function',
    );
  return Promise.all(
    previewing.map(async ({ call, tool }): Promise<CallPreview> => {
      try {
        const lines = boundPreviewLines(await withinBudget(producePreview(tool, call, input), budget));
        if (lines.length === 0) throw new EmptyPreview();
        return { index: call.index, tool: call.tool, lines, failed: false };
      } catch (error) {
        const errorClass = describeErrorClass(error);
        input.logger.warn('preview failed', { tool: call.tool, callIndex: call.index, errorClass });
        return {
          index: call.index,
          tool: call.tool,
          lines: [`Preview failed (${errorClass}).`],
          failed: true,
        };
      }
    }),
  );
}

async function producePreview(
  tool: Tool,
  call: PendingCall,
  input: { actingUser: UserProfile; context: ToolContext },
): Promise<unknown[]> {
  const parsed = safeParse(tool.input, call.arguments);
  if (!parsed.success) throw new InvalidPreviewArguments();
  const lines = await tool.preview?.(parsed.data, input.actingUser, input.context);
  return Array.isArray(lines) ? lines : [];
}

class InvalidPreviewArguments extends Error {
  public constructor() {
    super('The call arguments do not match the tool input schema.');
    this.name = 'InvalidArguments';
  }
}

async function withinBudget<T>(work: Promise<T>, budgetMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new PreviewTimeout()), budgetMs);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
