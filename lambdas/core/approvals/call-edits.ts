import * as z from 'zod/mini';
import { canonicalJson } from '../canonical-json.js';
import { callerToolName, isExternalToolName } from '../external-runs/external-tool-names.js';
import { nestsDeeperThan } from '../json-depth.js';
import { formatSchemaIssue } from '../schema-messages.js';
import { TEXTS } from '../texts.js';
import type { Tool } from '../tools/tool.js';

/** The bounds an edit keeps, those of a model's turn: every card holds what the model could propose. */
export const MAX_EDITED_ARGUMENTS_BYTES = 200_000;
export const MAX_EDITED_ARGUMENTS_DEPTH = 128;

/** One call's new arguments in a decision body (`edits`). */
export const callEditRequestSchema = z.strictObject({
  index: z.number().check(z.int(), z.nonnegative()),
  arguments: z.unknown(),
});
export const callEditsRequestSchema = z.array(callEditRequestSchema).check(z.minLength(1), z.maxLength(50));
export type CallEditRequest = z.infer<typeof callEditRequestSchema>;

/** An approver's edit of one call: what the model proposed, and what it is to run with instead. */
export interface CallEdit {
  index: number;
  tool: string;
  arguments: unknown;
  originalArguments: unknown;
}

export type EditsResolution =
  | { kind: 'resolved'; edits: CallEdit[] }
  /** The edit cannot apply to this card: a 400 naming `field`. */
  | { kind: 'refused'; field: string; message: string };

/**
 * Whether an approver may edit a call's arguments: a tool of ours says so itself (`editable`), an
 * external run's call carries what its caller declared for its tool.
 *
 * @example
 * isCallEditable({ tool: 'billing-agent/send_invoice', editable: true }, standIn); // true
 */
export function isCallEditable(
  call: { tool: string; editable?: boolean | undefined },
  tool: Tool | undefined,
): boolean {
  return isExternalToolName(call.tool) ? call.editable === true : tool?.editable === true;
}

/**
 * The edits a body proposes, checked against the card's calls and their tools: each names a call
 * on the card once, whose tool is registered and allows editing (`editable`), with arguments its
 * tool's schema accepts (an issue is named by its path under `body.edits.<n>.arguments`), within
 * the bounds of a model's turn, and different from what the call holds now.
 *
 * @example
 * resolveCallEdits({ calls, edits: [{ index: 0, arguments: { pageId: '12', title: 'Spring' } }] })
 */
export function resolveCallEdits(input: {
  calls: ReadonlyArray<{
    index: number;
    tool: string;
    arguments: unknown;
    editable?: boolean | undefined;
    registeredTool?: Tool | undefined;
  }>;
  edits: readonly CallEditRequest[];
}): EditsResolution {
  const resolved: CallEdit[] = [];
  for (const [position, edit] of input.edits.entries()) {
    const field = `body.edits.${position}`;
    const call = input.calls.find((candidate) => candidate.index === edit.index);
    if (!call) return refused(`${field}.index`, TEXTS.callNotOnCard(edit.index, input.calls.length));
    if (resolved.some((earlier) => earlier.index === edit.index)) {
      return refused(`${field}.index`, TEXTS.choiceNamedTwice(edit.index));
    }
    const tool = call.registeredTool;
    if (tool === undefined || !isCallEditable(call, tool)) {
      const message = isExternalToolName(call.tool)
        ? TEXTS.externalCallNotEditable(callerToolName(call.tool))
        : TEXTS.callNotEditable(call.tool);
      return refused(`${field}.index`, message);
    }
    const text = canonicalJson(edit.arguments ?? null);
    if (
      new TextEncoder().encode(text).byteLength > MAX_EDITED_ARGUMENTS_BYTES ||
      nestsDeeperThan(edit.arguments, MAX_EDITED_ARGUMENTS_DEPTH)
    ) {
      return refused(`${field}.arguments`, TEXTS.editTooLarge);
    }
    // An external tool's stand-in reads any JSON object: its caller checks its own arguments.
    const parsed = z.safeParse(tool.input, edit.arguments);
    if (!parsed.success) {
      const problem = formatSchemaIssue(parsed.error.issues[0], `${field}.arguments`);
      return refused(problem.path, `${problem.path}: ${problem.message}`);
    }
    if (text === canonicalJson(call.arguments ?? null)) {
      return refused(`${field}.arguments`, TEXTS.editUnchanged);
    }
    resolved.push({
      index: call.index,
      tool: call.tool,
      arguments: edit.arguments,
      originalArguments: call.arguments,
    });
  }
  return { kind: 'resolved', edits: resolved };
}

function refused(field: string, message: string): EditsResolution {
  return { kind: 'refused', field, message };
}
