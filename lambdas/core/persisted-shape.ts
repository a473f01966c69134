import * as z from 'zod/mini';
import { CountersignError } from './errors.js';

/**
 * Keys that reach an object's prototype when a later step copies keys by assignment. A
 * persisted shape comes back from storage that someone with table access may have edited, so
 * every reader refuses them in the shape's own structure.
 */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Values under these keys are the model's proposal (a call's arguments, and the arguments an
 * approver's edit replaced): they are only ever handed to a tool's schema or shown, never merged,
 * and a model that proposes `{"constructor": 1}` must not make its own run unreadable.
 */
const MODEL_DATA_KEYS: ReadonlySet<string> = new Set(['arguments', 'originalArguments']);

/** Deep enough for every persisted shape; anything nested deeper is not one of ours. */
const MAX_DEPTH = 64;

/**
 * True when `value` holds a prototype key (or nests beyond any persisted shape) outside the
 * model's own data.
 *
 * @example
 * hasPrototypeKey(JSON.parse('{"__proto__": {"admin": true}}')) // true
 * hasPrototypeKey({ arguments: JSON.parse('{"constructor": 1}') }) // false
 */
export function hasPrototypeKey(value: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH) return true;
  if (Array.isArray(value)) return value.some((member) => hasPrototypeKey(member, depth + 1));
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return false;
  return Object.keys(value).some(
    (key) =>
      PROTOTYPE_KEYS.has(key) ||
      (!MODEL_DATA_KEYS.has(key) && hasPrototypeKey((value as Record<string, unknown>)[key], depth + 1)),
  );
}

/**
 * The `schemaVersion` of a stored value, after refusing what no version reads: a non-object or
 * a prototype key. `undefined` when the value names none (written before versions existed).
 * The refusal is a `sealed-state-rejected`: the caller isolates it like a tampered blob.
 */
export function readSchemaVersion(value: unknown, what: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || hasPrototypeKey(value)) {
    throw refusal(what);
  }
  return (value as { schemaVersion?: unknown }).schemaVersion;
}

/** The refusal of a stored value of an unknown shape; names the shape, never its content. */
export function refusal(what: string): CountersignError {
  return new CountersignError('sealed-state-rejected', `The ${what} has an unknown shape.`, { expose: true });
}

/**
 * A stored shape's schema behind the prototype-key refusal: zod strips unknown keys, so the
 * raw value is checked before the schema sees it.
 *
 * @example
 * const storedRunRecordSchema = refusingPrototypeKeys(runRecordSchema);
 */
export function refusingPrototypeKeys<Output>(
  schema: z.ZodMiniType<Output, unknown>,
): z.ZodMiniType<Output, unknown> {
  return z.pipe(
    z.custom<unknown>((value) => typeof value === 'object' && value !== null && !hasPrototypeKey(value)),
    schema,
  );
}
