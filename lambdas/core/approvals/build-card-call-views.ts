import { nameErrorClass } from '../errors.js';
import { isExternalToolName } from '../external-runs/external-tool-names.js';
import type { UserProfile } from '../identity.js';
import type { Logger } from '../ports.js';
import { type ArgumentsExcerpt, excerptArguments } from '../previews/excerpt-arguments.js';
import { readGatePagesFor } from '../previews/read-gate-pages.js';
import type { TextDiff } from '../previews/text-diff.js';
import { revealHiddenCharacters } from '../reveal-hidden-characters.js';
import { TEXTS } from '../texts.js';
import { needsApproval, type ToolContext } from '../tools/tool.js';
import { type ArgumentChange, listArgumentChanges } from './argument-changes.js';
import { isCallEditable } from './call-edits.js';
import { classifyCallRunnability } from './call-runnability.js';
import { needsHumanApproval } from './needs-human-approval.js';
import type { CallPreview, CardCall } from './pending-call.js';
import type { ResolvedCall } from './resolve-calls.js';

export type PreviewView =
  /** `diffs`: word-level diffs of the long texts the write changes (a tool that gives them).
   * `suppliedBy: 'caller'`: the lines came with an external run's turn; countersign did not compute them. */
  | { status: 'shown'; lines: string[]; caveat: string; suppliedBy?: 'caller'; diffs?: TextDiff[] }
  /** The tool would refuse the call's arguments: the lines say so (not a failure, no record read). */
  | { status: 'refused'; lines: string[] }
  | { status: 'failed'; lines: string[]; message: string }
  | { status: 'withheld'; message: string }
  | { status: 'none'; message: string };

/** One call of a card as every surface shows it (the API's `pendingTools` entry). */
export interface CardCallView {
  index: number;
  tool: string;
  /** The call's arguments, or an excerpt of them when `argumentsExcerpt` is present. */
  arguments: unknown;
  /**
   * Present when the card shows less than the call carries: each cut with its path and full
   * size. The whole arguments are at GET /runs/{id}/calls/{index}.
   */
  argumentsExcerpt?: ArgumentsExcerpt;
  /** Whether the tool is registered in this deployment. */
  registered: boolean;
  /** Whether the call would run if the turn is approved (registered, offered, arguments accepted). */
  willRun: boolean;
  requiresApproval: boolean;
  /**
   * Present when the call's record changed after an earlier card was shown and its approval
   * was not applied (a tool's precondition): this card asks again. Names no record data.
   */
  recordChanged?: string;
  /**
   * Present when the call's effect could not be confirmed when the run paused (its server could
   * not be listed, its tool was missing, or it claimed to be less guarded than before): it is
   * decided as a write of its tool under every gate.
   */
  effectUnconfirmed?: string;
  /** Whether an approver may edit the call's arguments (its tool allows it: `editable`). */
  editable: boolean;
  /**
   * Present when an approver edited the call: who, and what changed against the model's own
   * proposal (at most 50 changes listed, `more` counts the rest). This card is their proposal.
   */
  edited?: { by: string; note: string; changes: ArgumentChange[]; more: number };
  preview: PreviewView;
}

/**
 * THE helper that turns an undecided card's calls into the call views a viewer sees, for every
 * surface: the inbox JSON, the inbox page, GET /runs/{id} and the `awaiting_approval` event
 * (docs/previews.md). Long arguments are excerpted here, once for every surface ({@link excerptArguments}).
 *
 * The read gate (docs/previews.md, "at reading"): a stored preview is shown only when its tool,
 * asked with `mayViewerReadPreview`, says this viewer may read it. It fails closed when there
 * is no viewer, the tool is not registered, or the tool has no preview contract: the
 * persisted preview outlives the registration that produced it.
 *
 * The gate's page reads go through {@link readGatePagesFor}: the reads of every card a viewer's
 * render asks for in one turn of the event loop become one batched read, reused for that
 * viewer for a bounded time. Build the cards of one render concurrently to get one batch.
 */
export async function buildCardCallViews(input: {
  calls: ReadonlyArray<ResolvedCall<CardCall>>;
  viewer: UserProfile | undefined;
  context: Omit<ToolContext, 'actingUser'>;
  logger: Logger;
}): Promise<CardCallView[]> {
  return Promise.all(
    input.calls.map(async (resolved): Promise<CardCallView> => {
      const { call, tool } = resolved;
      const shown = excerptArguments(call.arguments);
      const base = {
        index: call.index,
        tool: call.tool,
        arguments: shown.arguments,
        ...(shown.kind === 'excerpt' ? { argumentsExcerpt: shown.excerpt } : {}),
        registered: tool !== undefined,
        willRun: classifyCallRunnability(resolved).kind === 'runs',
        // As the card was decided under; a card sealed before guards were recorded asks the tool,
        // and a call to a tool nobody registered shows as needing approval: the card fails closed.
        requiresApproval:
          call.guard !== undefined ? needsHumanApproval(call.guard) : tool ? needsApproval(tool) : true,
        ...(call.recordChanged === true ? { recordChanged: TEXTS.recordChanged } : {}),
        ...(call.guard === 'unconfirmed' ? { effectUnconfirmed: TEXTS.effectUnconfirmed } : {}),
        editable: isCallEditable(call, tool),
        ...(call.edited
          ? {
              edited: {
                by: call.edited.by,
                note: TEXTS.editedBy(call.edited.by),
                ...listArgumentChanges(call.edited.originalArguments, call.arguments),
              },
            }
          : {}),
      };
      const preview = call.preview;
      // The caller's lines were for its own arguments (the pause leaves them off an edited call).
      if (!preview && call.edited && isExternalToolName(call.tool)) {
        return { ...base, preview: { status: 'none', message: TEXTS.callerPreviewOfOriginal } };
      }
      if (!preview) {
        // A call that needs approval from a tool with no preview contract (an MCP tool without a
        // companion, a team tool without `preview`): the approver decides without one, and reads so.
        const blind = base.requiresApproval && typeof tool?.preview !== 'function';
        return {
          ...base,
          preview: { status: 'none', message: blind ? TEXTS.previewFailed : TEXTS.noPreview },
        };
      }
      const lines = displayLinesOf(preview);
      // Nothing is ever blank: a stored preview without a visible line is a failed one.
      if (preview.failed || lines.length === 0) {
        const failedLines = lines.length > 0 ? lines : [TEXTS.previewFailedLine('EmptyPreview')];
        return { ...base, preview: { status: 'failed', lines: failedLines, message: TEXTS.previewFailed } };
      }
      // A refusal line describes the arguments only (which the card shows anyway): no read gate.
      if (preview.refused === true) return { ...base, preview: { status: 'refused', lines } };
      // A caller's lines describe what its agent sent for approvers, about records countersign does
      // not hold: there is no record to gate, so whoever sees the card reads them, flagged as the caller's.
      if (isExternalToolName(call.tool)) {
        return {
          ...base,
          preview: { status: 'shown', lines, caveat: TEXTS.callerPreviewCaveat, suppliedBy: 'caller' },
        };
      }
      const mayRead = await mayViewerRead(input, resolved);
      if (!mayRead) return { ...base, preview: { status: 'withheld', message: TEXTS.previewWithheld } };
      // A guarded write is not applied on a changed record: its preview is more than a snapshot.
      const caveat = call.precondition === undefined ? TEXTS.previewCaveat : TEXTS.previewPreconditionCaveat;
      const diffs = preview.diffs;
      return { ...base, preview: { status: 'shown', lines, caveat, ...(diffs?.length ? { diffs } : {}) } };
    }),
  );
}

/**
 * The stored lines as a person may read them: hidden and bidi characters as markers (a card
 * sealed before they were marked at capture gets them here), blank lines dropped.
 */
function displayLinesOf(preview: CallPreview): string[] {
  return preview.lines.map((line) => revealHiddenCharacters(line).trim()).filter((line) => line.length > 0);
}

async function mayViewerRead(
  input: { viewer: UserProfile | undefined; context: Omit<ToolContext, 'actingUser'>; logger: Logger },
  { tool, call, arguments: parsed }: ResolvedCall,
): Promise<boolean> {
  if (!input.viewer || !tool || typeof tool.mayViewerReadPreview !== 'function') return false;
  if (parsed.kind !== 'accepted') return false;
  try {
    return (
      (await tool.mayViewerReadPreview(parsed.value, input.viewer, {
        ...input.context,
        pages: readGatePagesFor(input.context.pages, input.viewer),
        actingUser: input.viewer,
      })) === true
    );
  } catch (error) {
    input.logger.warn('preview read gate failed', { tool: call.tool, errorClass: nameErrorClass(error) });
    return false;
  }
}
