import * as z from 'zod/mini';
import { CountersignError } from '../core/errors.js';
import {
  PAGE_METADATA_FIELDS,
  PAGE_NOT_AVAILABLE,
  type PageMetadataField,
  type PageMetadataPatch,
} from '../core/pages.js';
import { defineTool } from '../core/tools/tool.js';
import { describePreviewValue, PAGE_ID_MAX_LENGTH, readPermittedPage } from './page-text.js';

const SHORT_TEXT_MAX_LENGTH = 255;
const LONG_TEXT_MAX_LENGTH = 1000;

export const updatePageMetadataInput = z
  .strictObject({
    pageId: z
      .string()
      .check(z.minLength(1), z.maxLength(PAGE_ID_MAX_LENGTH), z.describe('The id of the page to change.')),
    title: z
      .optional(z.string().check(z.maxLength(SHORT_TEXT_MAX_LENGTH)))
      .check(z.describe('The new page title.')),
    description: z
      .optional(z.string().check(z.maxLength(LONG_TEXT_MAX_LENGTH)))
      .check(z.describe('The new meta description.')),
    keywords: z
      .optional(z.string().check(z.maxLength(LONG_TEXT_MAX_LENGTH)))
      .check(z.describe('The new meta keywords, comma-separated.')),
    author: z
      .optional(z.string().check(z.maxLength(SHORT_TEXT_MAX_LENGTH)))
      .check(z.describe('The new author.')),
    ogTitle: z
      .optional(z.string().check(z.maxLength(SHORT_TEXT_MAX_LENGTH)))
      .check(z.describe('The new Open Graph title.')),
    ogDescription: z
      .optional(z.string().check(z.maxLength(LONG_TEXT_MAX_LENGTH)))
      .check(z.describe('The new Open Graph description.')),
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
 * Implements the opt-in preview contract of seed 000: `preview` says, under the run's acting
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

  async execute(args, context) {
    const page = await readPermittedPage(args.pageId, context.actingUser, context);
    if (page === undefined) return { content: PAGE_NOT_AVAILABLE, isError: true };
    const fields = writtenFields(args, args);
    const patch: PageMetadataPatch = {};
    for (const field of fields) patch[field] = args[field];
    await context.pages.updateMetadata(page.pageId, patch, context.actingUser.userId);
    return {
      content: `Updated page ${page.pageId} (${page.language}): ${fields.join(', ')}.`,
      isError: false,
    };
  },

  async preview(args, actingUser, context) {
    const parsed = updatePageMetadataInput.safeParse(args);
    // The loop turns a throw into a flagged "preview failed" line; the class name is all it shows.
    if (!parsed.success) throw new CountersignError('bad-request', 'The call arguments are not valid.');
    const page = await readPermittedPage(parsed.data.pageId, actingUser, context);
    if (page === undefined) return [PAGE_NOT_AVAILABLE];
    // Order from the arguments as given (parsing reorders keys to the schema's order).
    const fields = writtenFields(args, parsed.data);
    const changing = fields.filter((field) => page[field] !== parsed.data[field]);
    const fieldLines = fields.map((field) => {
      const next = parsed.data[field] ?? '';
      if (page[field] === next) return `${field}: unchanged`;
      return `${field}: ${describePreviewValue(page[field])} → ${describePreviewValue(next)}`;
    });
    const noun = changing.length === 1 ? 'field' : 'fields';
    return [
      `Page ${page.pageId} (${page.language}): ${changing.length} ${noun} would change.`,
      ...fieldLines,
    ];
  },

  async mayViewerReadPreview(args, viewer, context) {
    const parsed = updatePageMetadataInput.safeParse(args);
    if (!parsed.success) return false;
    return (await readPermittedPage(parsed.data.pageId, viewer, context)) !== undefined;
  },
});

/** The metadata fields the call writes, in the order `orderSource` names them. */
function writtenFields(orderSource: object, values: UpdatePageMetadataArguments): PageMetadataField[] {
  const known: ReadonlySet<string> = new Set(PAGE_METADATA_FIELDS);
  return Object.keys(orderSource).filter(
    (key): key is PageMetadataField => known.has(key) && values[key as PageMetadataField] !== undefined,
  );
}
