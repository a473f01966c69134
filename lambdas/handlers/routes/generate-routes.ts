import { CONFIGURATION_ID_PATTERN } from '../../contract/common-schemas.js';
import { CountersignError } from '../../core/errors.js';
import {
  type GenerationDependencies,
  type GenerationRequest,
  generateText,
} from '../../core/generation/generate-text.js';
import { TEXTS } from '../../core/texts.js';
import type { HttpRequest, HttpResponse, RouteImplementations } from '../http/http-api.js';

/** The configuration of a `/configurations/{id}/...` route; a malformed id is as unknown as a missing one. */
function configurationIdOf(request: Pick<HttpRequest, 'pathParameters'>): string {
  const configurationId = request.pathParameters.id ?? '';
  if (!CONFIGURATION_ID_PATTERN.test(configurationId))
    throw new CountersignError('not-found', TEXTS.configurationNotFound);
  return configurationId;
}

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
  request: Pick<HttpRequest, 'principal' | 'pathParameters'>,
  operation: GenerationRequest,
): Promise<HttpResponse> {
  const { kind: _kind, ...outcome } = await generateText(
    dependencies,
    request.principal,
    configurationIdOf(request),
    operation,
  );
  return { statusCode: 200, json: outcome };
}
