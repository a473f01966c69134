import * as z from 'zod/mini';
import { canonicalJson, sha256Hex } from '../core/canonical-json.js';
import { PAGE_NOT_AVAILABLE, type Page } from '../core/pages.js';
import { quotePreviewValue } from '../core/previews/quote-preview-value.js';
import { TEXTS } from '../core/texts.js';
import { defineTool } from '../core/tools/tool.js';
import { mayViewerReadNamedPage, pageIdArgument, parsePreviewArguments } from './page-arguments.js';
import { readPermittedPage } from './page-text.js';
// The keywords field as `update_page_metadata` bounds it: an append never writes more.
import { KEYWORDS_MAX_LENGTH } from './update-page-metadata.js';

export const appendPageKeywordsInput = z.strictObject({
  pageId: pageIdArgument('The id of the page to change.'),
  keywords: z
    .array(z.string().check(z.minLength(1), z.maxLength(100)))
    .check(
      z.minLength(1),
      z.maxLength(20),
      z.describe('Keywords to add to the page; those it already has are left out.'),
    ),
});
export type AppendPageKeywordsArguments = z.infer<typeof appendPageKeywordsInput>;

/** The version a precondition seals: missing and forbidden pages read alike (no existence probe). */
const NOT_AVAILABLE_VERSION = 'page-not-available';

/**
 * `append_page_keywords`: a RELATIVE write. It adds keywords to what a page has, so the page's
 * keywords at the pause are an operand, not decoration (seed 000, "revisit when a writing tool
 * writes a relative change"): it opts into the precondition contract. Its version is a hash of
 * the page's keywords (and id and language) under the acting user, so an edit after the card
 * was shown means the append is not applied and the approver reviews a fresh preview.
 *
 * Same page and language checks, and the same neutral refusal, as `update_page_metadata`.
 *
 * @example
 * await appendPageKeywordsTool.preview?.({ pageId: '12', keywords: ['sale'] }, owner, context)
 * // ['Page 12 (en): 1 keyword would be added.', 'keywords: "spring" → "spring, sale"']
 */
export const appendPageKeywordsTool = defineTool<AppendPageKeywordsArguments>({
  name: 'append_page_keywords',
  description:
    "Adds keywords to a page's meta keywords, keeping the ones it has (keywords it already has are skipped). " +
    'Needs human approval; if the page changes before the approval is carried out, it is asked again.',
  effect: 'write',
  input: appendPageKeywordsInput,

  async execute(args, context) {
    const page = await readPermittedPage(args.pageId, context.actingUser, context);
    if (page === undefined) return { content: PAGE_NOT_AVAILABLE, isError: true };
    // The loop compared the version before this call; the store has no conditional write, so
    // compare once more right before writing to keep the window as small as the store allows.
    if (context.precondition !== undefined && versionOf(page) !== context.precondition) {
      return { content: TEXTS.recordChangedDuringWrite('append_page_keywords'), isError: true };
    }
    const { added, keywords } = appendKeywords(page.keywords, args.keywords);
    if (added.length === 0) {
      return {
        content: `Page ${page.pageId} (${page.language}) already has these keywords.`,
        isError: false,
      };
    }
    if (keywords.length > KEYWORDS_MAX_LENGTH) {
      return { content: tooLong(), isError: true };
    }
    await context.pages.updateMetadata(page.pageId, { keywords }, context.actingUser.userId);
    return {
      content: `Added to page ${page.pageId} (${page.language}): ${added.join(', ')}.`,
      isError: false,
    };
  },

  async readPrecondition(args, actingUser, context) {
    const page = await readPermittedPage(args.pageId, actingUser, context);
    return page === undefined ? NOT_AVAILABLE_VERSION : versionOf(page);
  },

  async preview(args, actingUser, context) {
    const parsed = parsePreviewArguments(appendPageKeywordsInput, args);
    const page = await readPermittedPage(parsed.pageId, actingUser, context);
    if (page === undefined) return [PAGE_NOT_AVAILABLE];
    const { added, keywords } = appendKeywords(page.keywords, parsed.keywords);
    const noun = added.length === 1 ? 'keyword' : 'keywords';
    const header = `Page ${page.pageId} (${page.language}): ${added.length} ${noun} would be added.`;
    if (added.length === 0) return [header, 'keywords: unchanged'];
    if (keywords.length > KEYWORDS_MAX_LENGTH) return [header, tooLong()];
    return [header, `keywords: ${quotePreviewValue(page.keywords)} → ${quotePreviewValue(keywords)}`];
  },

  mayViewerReadPreview: mayViewerReadNamedPage(appendPageKeywordsInput),
});

function versionOf(page: Page): string {
  return `sha256:${sha256Hex(canonicalJson({ pageId: page.pageId, language: page.language, keywords: page.keywords }))}`;
}

/** The page's keywords with the new ones after them; a keyword it has (any case) is not added twice. */
function appendKeywords(
  current: string,
  additions: readonly string[],
): { added: string[]; keywords: string } {
  const existing = current
    .split(',')
    .map((keyword) => keyword.trim())
    .filter((keyword) => keyword.length > 0);
  const seen = new Set(existing.map((keyword) => keyword.toLowerCase()));
  const added: string[] = [];
  for (const raw of additions) {
    const keyword = raw.trim();
    if (keyword.length === 0 || seen.has(keyword.toLowerCase())) continue;
    seen.add(keyword.toLowerCase());
    added.push(keyword);
  }
  return { added, keywords: [...existing, ...added].join(', ') };
}

function tooLong(): string {
  return `The keywords would be longer than ${KEYWORDS_MAX_LENGTH} characters; nothing would be added.`;
}
