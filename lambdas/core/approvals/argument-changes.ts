import { type ArgumentPath, CARD_CALL_ARGUMENT_CHARACTERS } from '../previews/excerpt-arguments.js';

/** One difference between what the model proposed and what an approver's edit holds. */
export type ArgumentChange =
  | { kind: 'changed'; path: ArgumentPath; before: unknown; after: unknown }
  | { kind: 'added'; path: ArgumentPath; after: unknown }
  | { kind: 'removed'; path: ArgumentPath; before: unknown };

interface PendingPair {
  before: unknown;
  after: unknown;
  path: ArgumentPath;
  inBefore: boolean;
  inAfter: boolean;
}

/** A card lists at most this many changes of one call; the rest are counted. */
export const MAX_LISTED_ARGUMENT_CHANGES = 50;
/**
 * The listed changes of one call take at most this many characters of JSON, as the call's own
 * arguments on the card do: a change that would pass it is counted, not listed (the whole
 * arguments are one request away), so a long edited value cannot swell every inbox page.
 */
const LISTED_CHANGES_CHARACTERS = CARD_CALL_ARGUMENT_CHARACTERS;
/** Below this depth a differing value is shown whole as one change instead of walked into. */
const MAX_WALKED_DEPTH = 10;

/**
 * The differences between two argument values, for the card's "edited by" diff: objects walked
 * key by key (in sorted order) and arrays position by position, down to 10 levels; a scalar, a
 * type change or anything deeper is one `changed` entry. At most 50 are listed, within 8,000
 * characters of JSON; `more` counts the rest, so a large rewrite cannot make the card unbounded.
 *
 * @example
 * listArgumentChanges({ pageId: '12', title: 'Sale' }, { pageId: '12', title: 'Spring sale' })
 * // { changes: [{ kind: 'changed', path: ['title'], before: 'Sale', after: 'Spring sale' }], more: 0 }
 */
export function listArgumentChanges(
  before: unknown,
  after: unknown,
): { changes: ArgumentChange[]; more: number } {
  const changes: ArgumentChange[] = [];
  let more = 0;
  let remaining = LISTED_CHANGES_CHARACTERS;
  const add = (change: ArgumentChange) => {
    const characters =
      changes.length < MAX_LISTED_ARGUMENT_CHANGES ? JSON.stringify(change).length : Infinity;
    if (characters <= remaining) {
      changes.push(change);
      remaining -= characters;
    } else more += 1;
  };
  // Depth first, keys sorted and positions in order, so the list reads like the arguments do.
  const pending: PendingPair[] = [{ before, after, path: [], inBefore: true, inAfter: true }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { path } = next;
    if (!next.inAfter) {
      add({ kind: 'removed', path, before: next.before });
      continue;
    }
    if (!next.inBefore) {
      add({ kind: 'added', path, after: next.after });
      continue;
    }
    if (sameValue(next.before, next.after)) continue;
    const walkable = path.length < MAX_WALKED_DEPTH;
    const children: PendingPair[] = [];
    if (walkable && Array.isArray(next.before) && Array.isArray(next.after)) {
      const length = Math.max(next.before.length, next.after.length);
      for (let position = 0; position < length; position += 1) {
        children.push({
          before: next.before[position],
          after: next.after[position],
          path: [...path, position],
          inBefore: position < next.before.length,
          inAfter: position < next.after.length,
        });
      }
    } else if (walkable && isPlainObject(next.before) && isPlainObject(next.after)) {
      const beforeObject = next.before;
      const afterObject = next.after;
      for (const key of [...new Set([...Object.keys(beforeObject), ...Object.keys(afterObject)])].sort()) {
        children.push({
          before: beforeObject[key],
          after: afterObject[key],
          path: [...path, key],
          inBefore: Object.hasOwn(beforeObject, key),
          inAfter: Object.hasOwn(afterObject, key),
        });
      }
    } else {
      add({ kind: 'changed', path, before: next.before, after: next.after });
      continue;
    }
    pending.push(...children.reverse());
  }
  return { changes, more };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sameValue(left: unknown, right: unknown): boolean {
  return JSON.stringify(left) === JSON.stringify(right) && typeof left === typeof right;
}
