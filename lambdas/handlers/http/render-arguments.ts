import type { PendingCallView } from '../../core/approvals/read-pending-call.js';
import type { ArgumentCut, ArgumentPath } from '../../core/previews/excerpt-arguments.js';
import { TEXTS } from '../../core/texts.js';
import { escapeHtml } from './escape-html.js';
import { showValue } from './show-value.js';

/** Deeper structures are shown as one isolated JSON text instead of one `<bdi>` per string. */
const JSON_RENDER_MAX_DEPTH = 32;

/**
 * A call's arguments as the page shows them: as `JSON.stringify(value, null, 2)` reads, with
 * every key and string value shown through {@link showValue} (the JSON API keeps exact values),
 * and a marker at every place the card cut (a string shown in part, a list or object shown
 * without its tail). The marker is a button that loads the whole arguments, so nothing cut is
 * out of reach. Written by hand because JSON.stringify cannot mark or isolate what it writes.
 */
export function renderArguments(value: unknown, cuts: readonly ArgumentCut[] = []): string {
  const cutsByPath = new Map(cuts.map((cut) => [pathKey(cut.path), cut]));
  return renderJson(value, [], cutsByPath);
}

/** GET /runs/{id}/calls/{index} for the page: the whole arguments, carrying the card's digest. */
export function renderFullArguments(call: PendingCallView): string {
  return `<pre class="arguments" data-arguments="full" data-digest="${escapeHtml(call.digest)}">${renderArguments(call.arguments)}</pre>`;
}

function renderJson(
  value: unknown,
  path: ArgumentPath,
  cutsByPath: ReadonlyMap<string, ArgumentCut>,
): string {
  const depth = path.length;
  // A card's excerpt is at most 10 deep, so only whole arguments reach this.
  if (depth > JSON_RENDER_MAX_DEPTH) return showValue(JSON.stringify(value, null, 2) ?? 'null');
  const cut = cutsByPath.get(pathKey(path));
  if (typeof value === 'string') {
    const marker = cut?.kind === 'text' ? renderMarker(TEXTS.argumentTextCut(cut.totalCharacters)) : '';
    return `${showValue(JSON.stringify(value))}${marker}`;
  }
  if (value === null || typeof value !== 'object') return escapeHtml(JSON.stringify(value) ?? 'null');
  const indent = '  '.repeat(depth + 1);
  const closing = '  '.repeat(depth);
  const isList = Array.isArray(value);
  const items = isList
    ? value.map((item, index) => `${indent}${renderJson(item ?? null, [...path, index], cutsByPath)}`)
    : Object.entries(value)
        .filter(([, item]) => item !== undefined)
        .map(
          ([key, item]) =>
            `${indent}${showValue(JSON.stringify(key))}: ${renderJson(item, [...path, key], cutsByPath)}`,
        );
  if (cut?.kind === 'entries') {
    items.push(`${indent}${renderMarker(TEXTS.argumentEntriesCut(cut.shownEntries, cut.totalEntries))}`);
  }
  const [open, close] = isList ? ['[', ']'] : ['{', '}'];
  if (items.length === 0) return `${open}${close}`;
  return `${open}\n${items.join(',\n')}\n${closing}${close}`;
}

function renderMarker(text: string): string {
  return `<button type="button" class="cut full-arguments">${escapeHtml(text)}</button>`;
}

function pathKey(path: ArgumentPath): string {
  return JSON.stringify(path);
}
