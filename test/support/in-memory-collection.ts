import { CountersignError } from '../../lambdas/core/errors.js';
import type { PageRequest } from '../../lambdas/core/ports.js';

/**
 * Records by id in memory, listed in id order with an opaque cursor, copied in and out (so a
 * caller cannot change what is stored): what the in-memory stand-ins of the admin ports share.
 *
 * @example
 * const users = new InMemoryCollection<UserProfile>((user) => user.userId);
 * users.put(alice);
 * const { items, cursor } = users.page({ limit: 10 });
 */
export class InMemoryCollection<Value> {
  private readonly items = new Map<string, Value>();

  public constructor(private readonly idOf: (value: Value) => string) {}

  public get(id: string): Value | undefined {
    const value = this.items.get(id);
    return value === undefined ? undefined : structuredClone(value);
  }

  public put(value: Value): void {
    this.items.set(this.idOf(value), structuredClone(value));
  }

  public delete(id: string): boolean {
    return this.items.delete(id);
  }

  public list(): Value[] {
    return this.page({ limit: Number.MAX_SAFE_INTEGER }).items;
  }

  public page(options: PageRequest): { items: Value[]; cursor?: string } {
    const startAfter = options.cursor === undefined ? undefined : decodeAfterCursor(options.cursor);
    const ordered = [...this.items.keys()].sort();
    const remaining = startAfter === undefined ? ordered : ordered.filter((id) => id > startAfter);
    const slice = remaining.slice(0, Math.max(0, options.limit));
    const items = slice.map((id) => structuredClone(this.items.get(id) as Value));
    const last = slice.at(-1);
    return last !== undefined && remaining.length > slice.length
      ? { items, cursor: encodeAfterCursor(last) }
      : { items };
  }
}

/** Opaque to callers, like a DynamoDB LastEvaluatedKey would be. */
function encodeAfterCursor(id: string): string {
  return Buffer.from(JSON.stringify({ after: id }), 'utf8').toString('base64url');
}

function decodeAfterCursor(cursor: string): string {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (parsed as { after?: unknown }).after === 'string'
    ) {
      return (parsed as { after: string }).after;
    }
  } catch {
    // Fall through to the refusal below: a malformed cursor is client input, not a crash.
  }
  throw new CountersignError('bad-request', 'The cursor is not valid.', { field: 'cursor' });
}
