import type { CallPreview, PendingCall } from '../approvals/pending-call.js';
import type { ResolvedCall } from '../approvals/resolve-calls.js';
import { nameErrorClass } from '../errors.js';
import type { UserProfile } from '../identity.js';
import type { Logger } from '../ports.js';
import { TEXTS } from '../texts.js';
import type { Tool, ToolContext } from '../tools/tool.js';
import { boundPreviewChanges } from './bound-preview-changes.js';
import { boundPreviewLines } from './bound-preview-lines.js';
import { diffTextChanges } from './diff-text-changes.js';

/** How long one preview may take before it becomes a failed line. */
export const DEFAULT_PREVIEW_TIME_BUDGET_MS = 2_000;

// Each error sets its `name`: it is what a card and a log show, and a minified bundle renames classes.
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
 * The approval scan's preview step (docs/previews.md). For every OFFERED call of the suspending turn
 * whose tool implements `preview`, produce its lines under the run's acting user, all calls
 * concurrently, each within a time budget that covers the tool AND the trimming of what it
 * returned. A throw, a timeout or an empty result becomes one line flagged `failed` that names
 * only the error class; the error itself goes to the log (class only: its text can carry
 * credentials). Arguments the tool's schema refuses preview as that refusal (an unflagged
 * line marked `refused`): the call would be refused, and that is what the approver decides on.
 *
 * Takes the calls resolved once for the pause (their tools and parsed arguments) and returns
 * the calls with each preview inline (a call without one has none), in their order.
 *
 * @example
 * const calls = await capturePreviews({ calls: resolveCalls(state.pendingCalls, tools), actingUser, context, logger });
 * calls[0]?.preview?.lines // ['Page 12 "Spring sale": description "" → "…"']
 */
export async function capturePreviews<Call extends PendingCall>(input: {
  calls: ReadonlyArray<ResolvedCall<Call>>;
  actingUser: UserProfile;
  context: ToolContext;
  logger: Logger;
  timeBudgetMs?: number;
}): Promise<Array<Call & { preview?: CallPreview }>> {
  const budget = input.timeBudgetMs ?? DEFAULT_PREVIEW_TIME_BUDGET_MS;
  return Promise.all(
    input.calls.map(async (resolved) => {
      const preview = await capturePreview(resolved, input, budget);
      return preview === undefined ? resolved.call : { ...resolved.call, preview };
    }),
  );
}

async function capturePreview(
  { call, tool, arguments: parsed }: ResolvedCall,
  input: { actingUser: UserProfile; context: ToolContext; logger: Logger },
  budget: number,
): Promise<CallPreview | undefined> {
  if (!call.offered || typeof tool?.preview !== 'function') return undefined;
  if (parsed.kind !== 'accepted') {
    const problem = parsed.kind === 'refused' ? parsed.problem : '';
    return {
      lines: boundPreviewLines([TEXTS.previewRefused(call.tool, problem)]),
      failed: false,
      refused: true,
    };
  }
  try {
    // Bounded and diffed inside the budget: what a tool returned costs the preview's own time.
    const produced = producePreview(tool, parsed.value, input).then((raw) => ({
      lines: boundPreviewLines(raw.lines),
      diffs: diffTextChanges(boundPreviewChanges(raw.changes)),
    }));
    const { lines, diffs } = await withinBudget(produced, budget);
    if (lines.length === 0) throw new EmptyPreview();
    return { lines, failed: false, ...(diffs.length > 0 ? { diffs } : {}) };
  } catch (error) {
    const errorClass = nameErrorClass(error);
    input.logger.warn('preview failed', { tool: call.tool, callIndex: call.index, errorClass });
    return { lines: [TEXTS.previewFailedLine(errorClass)], failed: true };
  }
}

/** What a tool's preview returned: its lines alone, or its lines and text changes. */
async function producePreview(
  tool: Tool,
  parsedArguments: unknown,
  input: { actingUser: UserProfile; context: ToolContext },
): Promise<{ lines: unknown[]; changes?: unknown }> {
  const produced: unknown = await tool.preview?.(parsedArguments, input.actingUser, input.context);
  if (Array.isArray(produced)) return { lines: produced };
  const { lines, changes } = (produced ?? {}) as { lines?: unknown; changes?: unknown };
  return { lines: Array.isArray(lines) ? lines : [], changes };
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
