import { describe, expect, it } from 'vitest';
import type * as zc from 'zod/v4/core';
import type { RouteDefinition } from '../../../lambdas/contract/route-definition.js';
import { ROUTES, routeKeyOf } from '../../../lambdas/contract/routes.js';

/** Every route of the manifest that takes a body, with the schema the router validates it with. */
const BODY_SCHEMAS = (ROUTES as readonly RouteDefinition[]).flatMap((route) =>
  route.body ? [[routeKeyOf(route), route.body] as const] : [],
);

/** Every object inside a schema that does not refuse unknown keys, by its path. */
function findLooseObjects(schema: zc.$ZodType, path: string, found: string[] = []): string[] {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  const visit = (inner: unknown, at: string) => findLooseObjects(inner as zc.$ZodType, at, found);
  switch (def.type) {
    case 'object': {
      const catchall = def.catchall as zc.$ZodType | undefined;
      if (catchall?._zod.def.type !== 'never') found.push(path || '(top)');
      for (const [key, value] of Object.entries(def.shape as Record<string, unknown>)) {
        visit(value, path ? `${path}.${key}` : key);
      }
      break;
    }
    case 'optional':
    case 'default':
    case 'prefault':
    case 'nullable':
    case 'readonly':
    case 'nonoptional':
      visit(def.innerType, path);
      break;
    case 'array':
      visit(def.element, `${path}[]`);
      break;
    case 'union':
      for (const option of def.options as unknown[]) visit(option, path);
      break;
    case 'pipe':
      visit(def.in, path);
      visit(def.out, path);
      break;
    default:
      break;
  }
  return found;
}

describe('API and admin bodies are strict at every depth', () => {
  it('covers every body of the API', () => {
    expect(BODY_SCHEMAS.map(([routeKey]) => routeKey)).toEqual(
      expect.arrayContaining([
        'POST /runs',
        'POST /runs/{id}/decision',
        'PUT /admin/users/{id}',
        'PUT /users/{id}/away',
      ]),
    );
    expect(BODY_SCHEMAS).toHaveLength(17);
  });

  it.each(BODY_SCHEMAS)('%s refuses unknown keys in every object it holds', (_route, schema) => {
    // Act
    const loose = findLooseObjects(schema as zc.$ZodType, '');

    // Assess
    expect(loose).toEqual([]);
  });

  it('finds a loose nested object (the walker itself can fail)', async () => {
    // Prepare
    const z = await import('zod/mini');
    const schema = z.strictObject({ options: z.optional(z.object({ fourEyes: z.boolean() })) });

    // Act & Assess
    expect(findLooseObjects(schema, '')).toEqual(['options']);
  });
});
