import * as z from 'zod/mini';
import { readSchemaVersion, refusal } from '../persisted-shape.js';
import { type CardContext, readCardContext } from './card-context.js';
import {
  type CallPreview,
  type CardCall,
  callPreviewSchema,
  cardCallSchema,
  pendingCallSchema,
} from './pending-call.js';

/**
 * What an approver's card needs, sealed apart from the transcript so that rendering the inbox
 * never decrypts a transcript. Version 4 marks an external run's call its caller declared editable
 * (`editable`); version 3 marks a call an approver edited (`edited`); version 2
 * stores each call with its preview inline; versions 2 and 1 (a `callPreviews` list joined to the
 * calls by index) are still read. Every version keeps an
 * immutable fixture in `test/fixtures/approval-card/`.
 */
export const APPROVAL_CARD_SCHEMA_VERSION = 4;

export interface ApprovalCard {
  schemaVersion: typeof APPROVAL_CARD_SCHEMA_VERSION;
  runId: string;
  turn: number;
  digest: string;
  pendingCalls: CardCall[];
  /** The request, the model's reason and the owner's name, captured at the pause (cards since #21). */
  context?: CardContext;
}

const headerSchema = z.object({
  runId: z.string().check(z.minLength(1)),
  turn: z.number().check(z.int(), z.nonnegative()),
  digest: z.string().check(z.minLength(1)),
});

const WHAT = 'sealed approval card';

/**
 * Reads a decrypted approval card of any known version as the current one. A card of an
 * unknown version, or with a prototype key, is refused; within a known version it degrades
 * rather than fails (docs/previews.md):
 * - pending calls that are not usable at all are dropped, which renumbers the rest, and each
 *   preview stays with its call;
 * - a missing or malformed preview means "no preview": the run still resumes.
 *
 * @example
 * const card = parseApprovalCard(await unsealJson(sealer, 'approval-card', runId, sealed));
 * card.pendingCalls[0]?.preview?.lines
 */
export function parseApprovalCard(value: unknown): ApprovalCard {
  const version = readSchemaVersion(value, WHAT);
  if (version !== 1 && version !== 2 && version !== 3 && version !== APPROVAL_CARD_SCHEMA_VERSION) {
    throw refusal(WHAT);
  }
  const header = headerSchema.safeParse(value);
  if (!header.success) throw refusal(WHAT);
  const raw = value as { pendingCalls?: unknown; callPreviews?: unknown; context?: unknown };
  const rawCalls = Array.isArray(raw.pendingCalls) ? raw.pendingCalls : [];
  const calls = version === 1 ? callsOfVersion1(rawCalls, raw.callPreviews) : rawCalls.map(readCall);
  const pendingCalls: CardCall[] = [];
  calls.forEach((call, storedPosition) => {
    if (call === undefined || call.index !== storedPosition) return;
    pendingCalls.push({ ...call, index: pendingCalls.length });
  });
  // A missing or malformed context is no context: the card still opens (docs/previews.md: a card degrades, it does not fail).
  const context = raw.context === undefined ? undefined : readCardContext(raw.context);
  return {
    schemaVersion: APPROVAL_CARD_SCHEMA_VERSION,
    ...header.data,
    pendingCalls,
    ...(context === undefined ? {} : { context }),
  };
}

/** A stored call, its preview dropped (not the call) when only the preview is malformed. */
function readCall(rawCall: unknown): CardCall | undefined {
  const { preview, ...rest } = (typeof rawCall === 'object' && rawCall !== null ? rawCall : {}) as {
    preview?: unknown;
  };
  const call = cardCallSchema.safeParse(rest);
  if (!call.success) return undefined;
  const parsedPreview = preview === undefined ? undefined : callPreviewSchema.safeParse(preview);
  return parsedPreview?.success ? { ...call.data, preview: parsedPreview.data } : call.data;
}

/** Absent `offered` on cards sealed before it was recorded: such a card counts its calls as offered. */
const version1CallSchema = z.extend(pendingCallSchema, { offered: z.optional(z.boolean()) });

const version1PreviewSchema = z.extend(callPreviewSchema, {
  index: z.number().check(z.int(), z.nonnegative()),
  tool: z.string(),
});

/**
 * Version 1 kept previews in their own list, bound to a call by its stored index: each is joined
 * to its call here, once, and one that names another tool than its call is dropped.
 */
function callsOfVersion1(rawCalls: unknown[], rawPreviews: unknown): Array<CardCall | undefined> {
  const previews = new Map<number, CallPreview & { tool: string }>();
  for (const rawPreview of Array.isArray(rawPreviews) ? rawPreviews : []) {
    const parsed = version1PreviewSchema.safeParse(rawPreview);
    if (parsed.success) {
      const { index, ...preview } = parsed.data;
      previews.set(index, preview);
    }
  }
  return rawCalls.map((rawCall) => {
    const parsed = version1CallSchema.safeParse(rawCall);
    if (!parsed.success) return undefined;
    const { offered, ...call } = parsed.data;
    const stored = previews.get(call.index);
    const preview = stored?.tool === call.tool ? withoutTool(stored) : undefined;
    return { ...call, offered: offered ?? true, ...(preview === undefined ? {} : { preview }) };
  });
}

function withoutTool(preview: CallPreview & { tool: string }): CallPreview {
  const { tool: _tool, ...rest } = preview;
  return rest;
}
