import * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';

/**
 * The error body of every refusal, from a handler or from the edge in front of it (401, 404 of
 * an unknown route, 405, 413, 429): `{"error": {"code", "message", "field"?}}`.
 */
export const errorBodySchema = z.object({
  error: z.object({
    /** A stable, kebab-case code (`bad-request`, `stale-digest`, `too-many-requests`, `internal`, …). */
    code: z.string().check(z.regex(/^[a-z]+(?:-[a-z]+)*$/)),
    message: z.string().check(z.minLength(1)),
    /** The offending input's path (`body.options.fourEyes`) on a 400. */
    field: z.optional(z.string()),
  }),
});
export type ErrorBody = z.output<typeof errorBodySchema>;

/**
 * A decision's 503 (a transient fault): besides the code and the message, whether the decision
 * is on record (`yes`: countersign delivers it by itself; `no`: send it again; `unknown`: sending
 * it again is safe, a decision on record is answered, never applied twice).
 */
export const decisionUnavailableBodySchema = z.object({
  error: z.object({
    code: z.literal('unavailable'),
    message: z.string().check(z.minLength(1)),
    decisionOnRecord: z.enum(['yes', 'no', 'unknown']),
  }),
});

/**
 * What API Gateway itself answers when it refuses before any function runs (a missing or invalid
 * token, a body over its limit, throttling, an integration failure): `{"message": "Unauthorized"}`.
 */
export const gatewayErrorBodySchema = z.object({ message: z.string() });

/** The opaque position of the next page: what the last page answered, passed back unchanged. */
const pageCursor = z.optional(z.string().check(z.minLength(1), z.maxLength(2000)));

/** The `?limit=&cursor=` query of a paged list: `limit` from 1 to `maximum`, `defaultLimit` when absent. */
export function pageQuerySchema(maximum: number, defaultLimit: number) {
  return z.strictObject({
    limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(maximum)), defaultLimit),
    cursor: pageCursor,
  });
}

/** One page of a list: its items and, when more follow, the cursor of the next page. */
export function pagedListSchema<Item extends zc.$ZodType>(item: Item) {
  return z.object({ items: z.array(item), cursor: z.optional(z.string()) });
}

/** `/configurations/{id}/…`: a configuration id; a malformed one is as unknown as a missing one (404). */
export const CONFIGURATION_ID_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,99}$/;

/**
 * True when two types are the same shape: each is assignable to the other and they name the same
 * key paths (assignability alone lets an optional field go missing on either side).
 */
export type SameShape<Left, Right> = [Left] extends [Right]
  ? [Right] extends [Left]
    ? [KeyPaths<Left>] extends [KeyPaths<Right>]
      ? [KeyPaths<Right>] extends [KeyPaths<Left>]
        ? true
        : false
      : false
    : false
  : false;

/** Every key path of a type, through arrays and every member of a union (`pendingTools[].preview.lines`). */
type KeyPaths<Value> = Value extends readonly (infer Item)[]
  ? `[]${KeyPaths<NonNullable<Item>>}`
  : Value extends object
    ? {
        [Key in keyof Value & string]-?: `.${Key}` | `.${Key}${KeyPaths<NonNullable<Value[Key]>>}`;
      }[keyof Value & string]
    : never;

/** Fails to compile unless its argument is `true`: a schema and the domain type it describes agree. */
export type Agrees<Check extends true> = Check;
