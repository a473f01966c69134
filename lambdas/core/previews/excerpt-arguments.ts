/**
 * What a card carries of one call's arguments. A card is read on every page load of every
 * approver, and an inbox page must stay far below Lambda's 6 MB response limit, so the card
 * shows an excerpt of long arguments and says exactly where it cut; the whole arguments are
 * one request away (GET /runs/{id}/calls/{index}).
 */

/** A string longer than this many characters (code points) shows its first 2,000 on the card. */
export const CARD_ARGUMENT_VALUE_CHARACTERS = 2_000;
/** What one call's arguments may take on a card, in characters of their JSON, cut marks included. */
export const CARD_CALL_ARGUMENT_CHARACTERS = 8_000;
/** Lists and objects nested deeper than this show no entries on the card. */
export const CARD_ARGUMENT_DEPTH = 10;
/** An object key longer than this ends the entries the card shows of its object. */
export const CARD_ARGUMENT_KEY_CHARACTERS = 100;

/** Where a value sits in a call's arguments: object keys and list positions, outermost first. */
export type ArgumentPath = Array<string | number>;

/** One place where the card shows less than the call carries. */
export type ArgumentCut =
  /** A string: the card shows its first `shownCharacters` characters (code points). */
  | { kind: 'text'; path: ArgumentPath; shownCharacters: number; totalCharacters: number }
  /** A list or an object: the card shows its first `shownEntries` entries, in order. */
  | { kind: 'entries'; path: ArgumentPath; shownEntries: number; totalEntries: number };

/** How a card shortened a call's arguments. Absent when the card shows them exactly. */
export interface ArgumentsExcerpt {
  cuts: ArgumentCut[];
  /** The length of the whole arguments as JSON, in characters (code points). */
  totalCharacters: number;
}

export type ExcerptedArguments =
  | { kind: 'exact'; arguments: unknown }
  | { kind: 'excerpt'; arguments: unknown; excerpt: ArgumentsExcerpt };

/**
 * The arguments as a card shows them: exact when they fit, otherwise the same structure with
 * long strings cut to their first characters and lists and objects cut to their first
 * entries, within a budget per call, each cut listed with its path and full size. The shown
 * text is always a prefix of the real value; nothing is reordered, rewritten or invented.
 *
 * @example
 * excerptArguments({ pageId: '12', description: 'x'.repeat(5000) })
 * // { kind: 'excerpt', arguments: { pageId: '12', description: 'x'.repeat(2000) },
 * //   excerpt: { cuts: [{ kind: 'text', path: ['description'], shownCharacters: 2000, totalCharacters: 5000 }],
 * //              totalCharacters: 5032 } }
 */
export function excerptArguments(value: unknown): ExcerptedArguments {
  const walk = { remaining: CARD_CALL_ARGUMENT_CHARACTERS, cuts: [] as ArgumentCut[] };
  const shown = excerptValue(value, [], walk);
  if (walk.cuts.length === 0) return { kind: 'exact', arguments: value };
  return {
    kind: 'excerpt',
    arguments: shown,
    excerpt: { cuts: walk.cuts, totalCharacters: countCodePoints(JSON.stringify(value) ?? 'null') },
  };
}

interface Walk {
  remaining: number;
  cuts: ArgumentCut[];
}

function excerptValue(value: unknown, path: ArgumentPath, walk: Walk): unknown {
  if (typeof value === 'string') return excerptString(value, path, walk);
  if (Array.isArray(value)) {
    return excerptEntries(
      value.map((item, index) => [index, item] as const),
      path,
      walk,
      (entries) => entries.map(([, item]) => item),
    );
  }
  if (typeof value === 'object' && value !== null) {
    return excerptEntries(Object.entries(value), path, walk, (entries) => Object.fromEntries(entries));
  }
  // Numbers, booleans and null are short; anything else is not JSON and shows as JSON would.
  const shown = JSON.stringify(value) === undefined ? null : value;
  walk.remaining -= String(shown).length;
  return shown;
}

function excerptString(value: string, path: ArgumentPath, walk: Walk): string {
  const allowed = Math.max(0, Math.min(CARD_ARGUMENT_VALUE_CHARACTERS, walk.remaining - 2));
  const shown = prefixOfCodePoints(value, allowed);
  walk.remaining -= JSON.stringify(shown).length;
  if (shown.length < value.length) {
    recordCut(walk, {
      kind: 'text',
      path,
      shownCharacters: countCodePoints(shown),
      totalCharacters: countCodePoints(value),
    });
  }
  return shown;
}

function excerptEntries<Key extends string | number>(
  entries: ReadonlyArray<readonly [Key, unknown]>,
  path: ArgumentPath,
  walk: Walk,
  assemble: (entries: Array<[Key, unknown]>) => unknown,
): unknown {
  walk.remaining -= 2;
  const shown: Array<[Key, unknown]> = [];
  if (path.length < CARD_ARGUMENT_DEPTH) {
    for (const [key, item] of entries) {
      if (walk.remaining <= 0) break;
      if (typeof key === 'string' && key.length > CARD_ARGUMENT_KEY_CHARACTERS) break;
      walk.remaining -= typeof key === 'string' ? JSON.stringify(key).length + 2 : 1;
      shown.push([key, excerptValue(item, [...path, key], walk)]);
    }
  }
  if (shown.length < entries.length) {
    recordCut(walk, { kind: 'entries', path, shownEntries: shown.length, totalEntries: entries.length });
  }
  return assemble(shown);
}

/** A cut costs what it adds to the card, so many small cuts cannot outgrow the budget either. */
function recordCut(walk: Walk, cut: ArgumentCut): void {
  walk.remaining -= JSON.stringify(cut).length;
  walk.cuts.push(cut);
}

/** The first `limit` code points of `text`, never splitting a surrogate pair. */
function prefixOfCodePoints(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = 0;
  for (let counted = 0; counted < limit && end < text.length; counted += 1) {
    end += isHighSurrogateAt(text, end) ? 2 : 1;
  }
  return text.slice(0, end);
}

function countCodePoints(text: string): number {
  let count = 0;
  for (let position = 0; position < text.length; position += isHighSurrogateAt(text, position) ? 2 : 1) {
    count += 1;
  }
  return count;
}

function isHighSurrogateAt(text: string, position: number): boolean {
  const code = text.charCodeAt(position);
  const next = text.charCodeAt(position + 1);
  return code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
}
