import {
  type GenerationDependencies,
  type GenerationRequest,
  generateText,
} from '../../core/generation/generate-text.js';
import type { HttpRequest, HttpResponse, RouteImplementations } from '../http/http-api.js';

/**
 * POST /configurations/{id}/complete and /translate: docs/skills.md's configuration-driven text
 * generation, answered synchronously (no run, no tools, nothing to approve).
 */
export function createGenerateRoutes(
  dependencies: GenerationDependencies,
): RouteImplementations<'api-generate'> {
  return {
    completeText: {
      handle: async (request) =>
        generate(dependencies, request, { operation: 'complete', body: request.body }),
    },
    translateText: {
      handle: async (request) =>
        generate(dependencies, request, { operation: 'translate', body: request.body }),
    },
  };
}

async function generate(
  dependencies: GenerationDependencies,
  request: Pick<HttpRequest<unknown, unknown, { id: string }>, 'principal' | 'path'>,
  operation: GenerationRequest,
): Promise<HttpResponse> {
  const { kind: _kind, ...outcome } = await generateText(
    dependencies,
    request.principal,
    request.path.id,
    operation,
  );
  return { statusCode: 200, json: outcome };
}
