import * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import { CountersignError } from '../../core/errors.js';

/** A DynamoDB key as the adapters use it: string attributes only. */
export type ItemKey = Record<string, string>;

const MAX_CURSOR_LENGTH = 2048;
/** DynamoDB refuses an empty key value and a sort key over 1024 bytes with a ValidationException. */
const MAX_KEY_VALUE_BYTES = 1024;
/** DynamoDB caps a response at 1 MB anyway; a page larger than this is a client mistake. */
const MAX_PAGE_LIMIT = 1000;

/** An opaque cursor: base64url of the LastEvaluatedKey. */
export function encodeCursor(key: Record<string, unknown> | undefined): string | undefined {
  if (!key) return undefined;
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

/**
 * The key a cursor stands for, if it has exactly the attributes `isValid` expects; anything
 * else is the client's mistake, never a 500.
 */
export function decodeCursor(cursor: string, isValid: (key: ItemKey) => boolean): ItemKey {
  const refuse = (): never => {
    throw new CountersignError('bad-request', 'The cursor is not valid.', { field: 'cursor' });
  };
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) refuse();
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) refuse();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return refuse();
  }
  if (typeof decoded !== 'object' || decoded === null || Array.isArray(decoded)) return refuse();
  const entries = Object.entries(decoded);
  // A forged cursor must not reach DynamoDB with a key value it rejects: that would be a 500.
  const usable = (value: unknown): boolean =>
    typeof value === 'string' && value.length > 0 && Buffer.byteLength(value, 'utf8') <= MAX_KEY_VALUE_BYTES;
  if (!entries.every(([, value]) => usable(value))) return refuse();
  const key = Object.fromEntries(entries) as ItemKey;
  return isValid(key) ? key : refuse();
}

/** True when `key` has exactly the attribute names `names`. */
export function hasExactAttributes(key: ItemKey, names: readonly string[]): boolean {
  const keyNames = Object.keys(key);
  return keyNames.length === names.length && names.every((name) => typeof key[name] === 'string');
}

/** Refuses a page size that is not a positive integer up to 1000. */
export function assertPageLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw new CountersignError('bad-request', `The limit must be an integer from 1 to ${MAX_PAGE_LIMIT}.`, {
      field: 'limit',
    });
  }
}

/**
 * Drops `undefined` members, nested ones too (tool arguments are `unknown`): the caller's
 * document client may not be set to remove them, and DynamoDB has no `undefined`.
 */
export function withoutUndefined<T extends object>(value: T): T {
  return stripUndefined(value) as T;
}

function stripUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((member) => member !== undefined).map(stripUndefined);
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) {
    return value;
  }
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .map(([name, member]) => [name, stripUndefined(member)]),
  );
}

/**
 * Parses a stored item through the core's schema (extra attributes such as pk/sk are
 * stripped). A stored item that does not parse is our fault, not the client's.
 */
export function parseItem<Schema extends zc.$ZodType>(
  schema: Schema,
  item: Record<string, unknown>,
  what: string,
): z.output<Schema> {
  const parsed = z.safeParse(schema, item);
  if (!parsed.success) {
    throw new CountersignError('internal', `A stored ${what} has an unexpected shape.`, { expose: false });
  }
  return parsed.data;
}

/**
 * Whether a write lost its condition. By name, as the SDK's exception carries it: so this module
 * (which the in-memory run repository shares) does not load the DynamoDB client.
 */
export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
