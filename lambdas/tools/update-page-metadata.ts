import * as z from 'zod/mini';
import {
  PAGE_METADATA_FIELDS,
  PAGE_NOT_AVAILABLE,
  type PageMetadataField,
  type PageMetadataPatch,
} from '../core/pages.js';
import { quotePreviewValue } from '../core/previews/quote-preview-value.js';
import { defineTool } from '../core/tools/tool.js';
import { mayViewerReadNamedPage, pageIdArgument, parsePreviewArguments } from './page-arguments.js';
import { readPermittedPage } from './page-text.js';

const SHORT_TEXT_MAX_LENGTH = 255;
const LONG_TEXT_MAX_LENGTH = 1000;
/** The longest keywords field a tool writes; `append_page_keywords` keeps to it too. */
export const KEYWORDS_MAX_LENGTH = LONG_TEXT_MAX_LENGTH;

/** A metadata field the call may set: optional, absolute, bounded like the store's column. */
function metadataText(maxLength: number, description: string) {
  return z.optional(z.string().check(z.maxLength(maxLength))).check(z.describe(description));
}

export const updatePageMetadataInput = z
  .strictObject({
    pageId: pageIdArgument('The id of the page to change.'),
    title: metadataText(SHORT_TEXT_MAX_LENGTH, 'The new page title.'),
    description: metadataText(LONG_TEXT_MAX_LENGTH, 'The new meta description.'),
    keywords: metadataText(KEYWORDS_MAX_LENGTH, 'The new meta keywords, comma-separated.'),
    author: metadataText(SHORT_TEXT_MAX_LENGTH, 'The new author.'),
    ogTitle: metadataText(SHORT_TEXT_MAX_LENGTH, 'The new Open Graph title.'),
    ogDescription: metadataText(LONG_TEXT_MAX_LENGTH, 'The new Open Graph description.'),
  })
  .check(
    z.refine(
      (args: Partial<Record<PageMetadataField, string>>) =>
        PAGE_METADATA_FIELDS.some((field) => args[field] !== undefined),
      {
        message: `Set at least one of: ${PAGE_METADATA_FIELDS.join(', ')}.`,
      },
    ),
  );
export type UpdatePageMetadataArguments = z.infer<typeof updatePageMetadataInput>;

/**
 * `update_page_metadata`: the one shipped writer. Sets ABSOLUTE values (never an append or an
 * increment) on a page, as the acting user, after checking their page and language access.
 * A missing page and a forbidden page get the same `PAGE_NOT_AVAILABLE` refusal.
 *
 * Implements the opt-in preview contract of docs/previews.md: `preview` says, under the run's acting
 * user, what each written field holds now and what it would become (120-character excerpts,
 * only the fields the call writes); `mayViewerReadPreview` applies the same record check to
 * the person looking at the card.
 *
 * @example
 * await updatePageMetadataTool.preview?.({ pageId: '12', description: 'Spring sale' }, owner, context)
 * // ['Page 12 (en): 1 field would change.', 'description: "Winter sale" → "Spring sale"']
 */
export const updatePageMetadataTool = defineTool<UpdatePageMetadataArguments>({
  name: 'update_page_metadata',
  description:
    'Sets metadata fields of one page to the given values (absolute values, not edits): title, description, ' +
    'keywords, author, ogTitle, ogDescription. Fields you leave out keep their value. Needs human approval.',
  effect: 'write',
  input: updatePageMetadataInput,
  // Absolute values an approver may correct before approving (the edit is re-previewed and re-approved).
  editable: true,
  idempotent: true,

  async execute(args, context) {
    const page = await readPermittedPage(args.pageId, context.actingUser, context);
    if (page === undefined) return { content: PAGE_NOT_AVAILABLE, isError: true };
    const fields = writtenFields(args, args);
    const patch: PageMetadataPatch = {};
    for (const field of fields) patch[field] = args[field];
    // Once per call: a retried call whose write landed finds its key on the page and writes nothing.
    const written = await context.pages.applyMetadata(page.pageId, {
      patch,
      updatedBy: context.actingUser.userId,
      idempotencyKey: context.idempotencyKey,
    });
    if (written.kind === 'not-found') return { content: PAGE_NOT_AVAILABLE, isError: true };
    return {
      content: `Updated page ${page.pageId} (${page.language}): ${fields.join(', ')}.`,
      isError: false,
    };
  },

  async preview(args, actingUser, context) {
    const parsed = parsePreviewArguments(updatePageMetadataInput, args);
    const page = await readPermittedPage(parsed.pageId, actingUser, context);
    if (page === undefined) return [PAGE_NOT_AVAILABLE];
    // Order from the arguments as given (parsing reorders keys to the schema's order).
    const fields = writtenFields(args, parsed);
    const changing = fields.filter((field) => page[field] !== parsed[field]);
    const fieldLines = fields.map((field) => {
      const next = parsed[field] ?? '';
      if (page[field] === next) return `${field}: unchanged`;
      return `${field}: ${quotePreviewValue(page[field])} → ${quotePreviewValue(next)}`;
    });
    const noun = changing.length === 1 ? 'field' : 'fields';
    return {
      lines: [
        `Page ${page.pageId} (${page.language}): ${changing.length} ${noun} would change.`,
        ...fieldLines,
      ],
      // The whole texts, for the card's word-level diff of what each changing field becomes.
      changes: changing.map((field) => ({ field, before: page[field], after: parsed[field] ?? '' })),
    };
  },

  mayViewerReadPreview: mayViewerReadNamedPage(updatePageMetadataInput),
});

/** The metadata fields the call writes, in the order `orderSource` names them. */
function writtenFields(orderSource: object, values: UpdatePageMetadataArguments): PageMetadataField[] {
  const known: ReadonlySet<string> = new Set(PAGE_METADATA_FIELDS);
  return Object.keys(orderSource).filter(
    (key): key is PageMetadataField => known.has(key) && values[key as PageMetadataField] !== undefined,
  );
}
