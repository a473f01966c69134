import { chainEntrySchema } from '../../lambdas/core/receipts/chain-entry.js';
import { hashEntry } from '../../lambdas/core/receipts/entry-hashes.js';

// How the receipt tests tamper with a chain: one leaf at a time, plausibly, or re-linked whole.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every path to a leaf value of `value` (a key or an index per step). */
export function leafPaths(value: Json, path: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.flatMap((member, index) => leafPaths(member, [...path, index]));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, member]) => leafPaths(member, [...path, key]));
  }
  return [path];
}

function readPath(value: Json, path: ReadonlyArray<string | number>): Json {
  return path.reduce<Json>((node, step) => (node as Record<string | number, Json>)[step] as Json, value);
}

function writePath(value: Json, path: ReadonlyArray<string | number>, leaf: Json): Json {
  const copy = structuredClone(value);
  const parent = readPath(copy, path.slice(0, -1)) as Record<string | number, Json>;
  parent[path.at(-1) as string | number] = leaf;
  return copy;
}

/** Ways to change one value that keep it a plausible value of its kind (a hash stays a hash). */
export function changesOf(leaf: Json): Json[] {
  if (typeof leaf === 'boolean') return [!leaf];
  if (typeof leaf === 'number') return [leaf + 1, Math.max(0, leaf - 1) === leaf ? leaf + 2 : leaf - 1];
  if (leaf === null) return [`sha256:${'0'.repeat(64)}`];
  if (typeof leaf !== 'string') return [];
  if (/^sha256:[0-9a-f]{64}$/.test(leaf)) return [`${leaf.slice(0, -1)}${leaf.endsWith('0') ? '1' : '0'}`];
  if (!Number.isNaN(Date.parse(leaf)) && leaf.endsWith('Z')) {
    return [new Date(Date.parse(leaf) + 1000).toISOString()];
  }
  if (leaf === 'approve' || leaf === 'reject') return [leaf === 'approve' ? 'reject' : 'approve'];
  // A base64 signature: another character keeps it base64.
  return [`${leaf.slice(0, -2)}${leaf.at(-2) === 'A' ? 'B' : 'A'}${leaf.at(-1)}`, `${leaf}x`];
}

/** The first change of the leaf at `path` that still parses as an entry, else any change. */
export function tamper(
  entry: Json,
  path: ReadonlyArray<string | number>,
): { entry: Json; keepsFormat: boolean } {
  const changes = changesOf(readPath(entry, path)).map((leaf) => writePath(entry, path, leaf));
  const plausible = changes.find((changed) => chainEntrySchema.safeParse(changed).success);
  return plausible
    ? { entry: plausible, keepsFormat: true }
    : { entry: changes[0] as Json, keepsFormat: false };
}

/** Rewrites every `previousHash` to name the entry before it, as a forger re-linking a chain would. */
export function relink(entries: Array<Record<string, Json>>): Array<Record<string, Json>> {
  const chain: Array<Record<string, Json>> = [];
  for (const entry of entries) {
    const previous = chain.at(-1);
    chain.push({ ...entry, previousHash: previous ? hashEntry(chainEntrySchema.parse(previous)) : null });
  }
  return chain;
}
