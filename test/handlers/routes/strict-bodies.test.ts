import { describe, expect, it } from 'vitest';
import type * as zc from 'zod/v4/core';
import {
  completeRequestSchema,
  translateRequestSchema,
} from '../../../lambdas/core/generation/generate-text.js';
import { decisionRequestSchema } from '../../../lambdas/core/runs/decide-run.js';
import { startRunRequestSchema } from '../../../lambdas/core/runs/start-run.js';
import { attachSkillsRequestSchema } from '../../../lambdas/core/skills/attach-skills.js';
import { enableSkillRequestSchema } from '../../../lambdas/core/skills/review-skill.js';
import { ADMIN_BODY_SCHEMAS } from '../../../lambdas/handlers/routes/admin-routes.js';
import { ingestRequestSchema } from '../../../lambdas/handlers/routes/skills-routes.js';

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
  it.each([
    ['POST /runs', startRunRequestSchema],
    ['POST /runs/{id}/decision', decisionRequestSchema],
    ['POST /configurations/{id}/complete', completeRequestSchema],
    ['POST /configurations/{id}/translate', translateRequestSchema],
    ['PUT /admin/configurations/{id}', ADMIN_BODY_SCHEMAS.configurations],
    ['PUT /admin/tasks/{id}', ADMIN_BODY_SCHEMAS.tasks],
    ['PUT /admin/users/{id}', ADMIN_BODY_SCHEMAS.users],
    ['PUT /admin/pages/{id}', ADMIN_BODY_SCHEMAS.pages],
    ['POST /admin/skills/ingest', ingestRequestSchema],
    ['POST /admin/skills/…/attach', attachSkillsRequestSchema],
    ['POST /admin/skills/{id}/enable', enableSkillRequestSchema],
  ] as const)('%s refuses unknown keys in every object it holds', (_route, schema) => {
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
