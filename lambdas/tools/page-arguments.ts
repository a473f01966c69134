import * as z from 'zod/mini';
import { CountersignError } from '../core/errors.js';
import type { UserProfile } from '../core/identity.js';
import type { ToolContext } from '../core/tools/tool.js';
import { PAGE_ID_MAX_LENGTH, readPermittedPage } from './page-text.js';

/**
 * The `pageId` argument every page tool takes, with the page schema's own length limit.
 *
 * @example
 * z.strictObject({ pageId: pageIdArgument('The id of the page to read.') })
 */
export function pageIdArgument(description: string) {
  return z.string().check(z.minLength(1), z.maxLength(PAGE_ID_MAX_LENGTH), z.describe(description));
}

/**
 * A write tool's arguments parsed for its preview. The loop turns the throw into a flagged
 * "preview failed" line; the error's class name is all it shows.
 *
 * @example
 * const { pageId } = parsePreviewArguments(updatePageMetadataInput, args);
 */
export function parsePreviewArguments<Arguments>(input: z.ZodMiniType<Arguments>, args: unknown): Arguments {
  const parsed = input.safeParse(args);
  if (!parsed.success) throw new CountersignError('bad-request', 'The call arguments are not valid.');
  return parsed.data;
}

/**
 * The `mayViewerReadPreview` of a page write tool: a viewer may read the preview when they may
 * access the page the call names (missing and forbidden alike say no).
 *
 * @example
 * defineTool({ ..., mayViewerReadPreview: mayViewerReadNamedPage(appendPageKeywordsInput) })
 */
export function mayViewerReadNamedPage(
  input: z.ZodMiniType<{ pageId: string }>,
): (args: unknown, viewer: UserProfile, context: ToolContext) => Promise<boolean> {
  return async (args, viewer, context) => {
    const parsed = input.safeParse(args);
    if (!parsed.success) return false;
    return (await readPermittedPage(parsed.data.pageId, viewer, context)) !== undefined;
  };
}
