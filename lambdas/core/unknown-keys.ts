import * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';

/** A stored value read through a strict schema, and the keys the schema did not know. */
export type ParsedWithUnknownKeys<Value> =
  | { kind: 'parsed'; value: Value; unknownKeys: string[] }
  | { kind: 'invalid' };

/**
 * Reads a STORED value through a schema that is strict at every depth. Records written before
 * a key was renamed or dropped (or by hand) may carry keys the schema no longer knows: they
 * are named (dotted paths such as `options.four_eyes`) so the caller can report them, and the
 * rest is read as the schema defines it. A key is never guessed into a known one.
 */
export function parseWithUnknownKeys<Schema extends zc.$ZodType>(
  schema: Schema,
  value: unknown,
): ParsedWithUnknownKeys<z.output<Schema>> {
  const first = z.safeParse(schema, value);
  if (first.success) return { kind: 'parsed', value: first.data, unknownKeys: [] };
  const unknown = first.error.issues.filter((issue) => issue.code === 'unrecognized_keys');
  if (unknown.length !== first.error.issues.length) return { kind: 'invalid' };
  const pruned = structuredClone(value);
  const unknownKeys: string[] = [];
  for (const issue of unknown) {
    const holder = issue.path.reduce<unknown>(
      (current, segment) => (current as Record<PropertyKey, unknown> | undefined)?.[segment],
      pruned,
    ) as Record<string, unknown> | undefined;
    for (const key of issue.keys) {
      unknownKeys.push([...issue.path.map(String), key].join('.'));
      if (holder) delete holder[key];
    }
  }
  const second = z.safeParse(schema, pruned);
  return second.success ? { kind: 'parsed', value: second.data, unknownKeys } : { kind: 'invalid' };
}
