import * as z from 'zod/mini';
import { canonicalJson } from '../core/canonical-json.js';
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
/** A version names the record it was read from: the page's id, language and keywords. */
const VERSION_PREFIX = 'page-keywords:';

const versionSchema = z.object({ pageId: z.string(), language: z.string(), keywords: z.string() });
type PageKeywordsVersion = z.infer<typeof versionSchema>;

/**
 * `append_page_keywords`: a RELATIVE write. It adds keywords to what a page has, so the page's
 * keywords at the pause are an operand, not decoration (docs/previews.md, "revisit when a writing tool
 * writes a relative change"): it opts into the precondition contract. Its version is the page's
 * id, language and keywords under the acting user, sealed with the card; execution appends to
 * exactly those keywords in ONE conditional write that lands only while the page still holds
 * them (and not twice for one call: the call's idempotency key is part of the condition). An
 * edit after the card was shown, even one that lands between the loop's check and the write,
 * means the append is not applied and the approver reviews a fresh preview.
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
  idempotent: true,

  async execute(args, context) {
    const page = await readPermittedPage(args.pageId, context.actingUser, context);
    if (page === undefined) return { content: PAGE_NOT_AVAILABLE, isError: true };
    // The record the approval was decided on; without a sealed version, the page as read now.
    const approved = context.precondition === undefined ? page : readVersion(context.precondition);
    if (approved === undefined || approved.pageId !== page.pageId) return recordChanged();
    const { added, keywords } = appendKeywords(approved.keywords, args.keywords);
    if (added.length === 0) {
      // Nothing to write: true only while the page still holds what the approver saw.
      if (page.keywords !== approved.keywords || page.language !== approved.language) return recordChanged();
      return {
        content: `Page ${page.pageId} (${page.language}) already has these keywords.`,
        isError: false,
      };
    }
    if (keywords.length > KEYWORDS_MAX_LENGTH) {
      return { content: tooLong(), isError: true };
    }
    const written = await context.pages.applyMetadata(page.pageId, {
      patch: { keywords },
      updatedBy: context.actingUser.userId,
      idempotencyKey: context.idempotencyKey,
      expect: { language: approved.language, keywords: approved.keywords },
    });
    if (written.kind === 'not-found') return { content: PAGE_NOT_AVAILABLE, isError: true };
    if (written.kind === 'record-changed') return recordChanged();
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

/** The version: the operand itself (sealed with the card, never shown), so the write can be conditional on it. */
function versionOf(page: Page): string {
  const version: PageKeywordsVersion = {
    pageId: page.pageId,
    language: page.language,
    keywords: page.keywords,
  };
  return `${VERSION_PREFIX}${canonicalJson(version)}`;
}

/** The record a sealed version names; `undefined` for a page that was not available, or any other value. */
function readVersion(version: string): PageKeywordsVersion | undefined {
  if (!version.startsWith(VERSION_PREFIX)) return undefined;
  try {
    const parsed = versionSchema.safeParse(JSON.parse(version.slice(VERSION_PREFIX.length)));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function recordChanged() {
  return {
    content: TEXTS.recordChangedDuringWrite('append_page_keywords'),
    isError: true,
    recordChanged: true,
  };
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
