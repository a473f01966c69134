import * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import type { RawPathParameters, RouteDefinition } from '../../contract/route-definition.js';
import { CountersignError } from '../../core/errors.js';
import { badRequestFrom } from './http-errors.js';

/** What a route's entry says of its path parameters: their schemas and how each is refused. */
export type PathSchemas = Pick<RouteDefinition, 'pathParameters' | 'pathRefusals'>;

/** The path parameters of a route entry as its schema reads them (none: an empty record). */
export type PathOf<Entry> = Entry extends { pathParameters: infer Schema extends zc.$ZodType }
  ? z.output<Schema>
  : Record<string, never>;

/**
 * A route's path parameters as its manifest entry's schemas read them. The first one refused, in
 * the schema's order, is answered as the entry says (`pathRefusals` in route-definition.ts): as
 * the unknown resource it names, or a 400 naming it.
 *
 * @example
 * parsePathParameters(routeOf('getRun'), { id: '../x' }); // throws 404 "Run not found."
 */
export function parsePathParameters<Entry extends PathSchemas>(
  route: Entry,
  raw: RawPathParameters,
): PathOf<Entry> {
  const parsed: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(route.pathParameters?._zod.def.shape ?? {})) {
    const refusal = route.pathRefusals?.[name];
    const value = raw[name];
    if (refusal?.kind === 'unread') {
      parsed[name] = value;
      continue;
    }
    const result = z.safeParse(schema, value);
    if (result.success) {
      parsed[name] = result.data;
      continue;
    }
    if (!refusal) throw badRequestFrom(result.error, `path.${name}`);
    if (refusal.kind === 'bad-request') {
      throw new CountersignError('bad-request', refusal.message, { field: name });
    }
    throw new CountersignError(
      'not-found',
      typeof refusal.message === 'string' ? refusal.message : refusal.message(raw),
    );
  }
  return parsed as PathOf<Entry>;
}
