import { readFileSync } from 'node:fs';

/**
 * docs/runbook.md as text, put into the bundle at build time by esbuild's `define`
 * (lib/functions.ts): what deploys is the runbook of the same commit. Unset outside a bundle.
 */
declare const COUNTERSIGN_RUNBOOK_MARKDOWN: string | undefined;

/** The global name the bundles define the runbook's text under. */
export const RUNBOOK_MARKDOWN_DEFINE = 'COUNTERSIGN_RUNBOOK_MARKDOWN';

/**
 * The page's only styles are its own (no script, no other origin): a hash in the policy rather
 * than 'unsafe-inline'.
 */
const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}' +
  'code,pre{font-family:ui-monospace,monospace;font-size:.9em}pre{overflow-x:auto;background:#f4f4f4;padding:.75rem}' +
  'table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem;vertical-align:top}' +
  'h3{margin-top:2rem}:target{background:#fff4c2}';

/** Where a link to another page of docs/ goes: the published package's copy of it. */
const PUBLISHED_DOCS = 'https://unpkg.com/countersign/docs/';

let rendered: Promise<string> | undefined;

/**
 * GET /runbook: docs/runbook.md as one HTML page, so every alarm's `Runbook:` link resolves in
 * the deployment itself. Headings keep GitHub's anchors (`### executionsfailed` is
 * `#executionsfailed`), as the alarms link them. Rendered once per container, on the first
 * request, by marked (loaded then, so the inbox function's cold start does not pay for it).
 *
 * @example
 * const html = await renderRunbookPage(); // '<!doctype html>...<h3 id="executionsfailed">...'
 */
export function renderRunbookPage(): Promise<string> {
  rendered ??= renderMarkdown(readRunbookMarkdown()).catch((error: unknown) => {
    rendered = undefined;
    throw error;
  });
  return rendered;
}

/** The policy the page is served with: nothing but its own inline style may load. */
export async function runbookPagePolicy(): Promise<string> {
  const { createHash } = await import('node:crypto');
  const hash = createHash('sha256').update(STYLE).digest('base64');
  return `default-src 'none'; style-src 'sha256-${hash}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;
}

function readRunbookMarkdown(): string {
  if (typeof COUNTERSIGN_RUNBOOK_MARKDOWN === 'string') return COUNTERSIGN_RUNBOOK_MARKDOWN;
  // A source checkout (npm start, the tests): the file beside the code.
  return readFileSync(new URL('../../../docs/runbook.md', import.meta.url), 'utf8');
}

async function renderMarkdown(markdown: string): Promise<string> {
  const [{ Marked }, { gfmHeadingId }] = await Promise.all([
    import('marked'),
    import('marked-gfm-heading-id'),
  ]);
  const marked = new Marked(gfmHeadingId(), {
    gfm: true,
    // The runbook's links to its sibling pages (approvers.md#policy) lead to the published docs.
    walkTokens: (token) => {
      if (token.type === 'link' && /^[a-z-]+\.md(?:#|$)/.test(token.href)) {
        token.href = `${PUBLISHED_DOCS}${token.href}`;
      }
    },
  });
  const body = await marked.parse(markdown);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>countersign runbook</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}
