import { CountersignError } from '../../core/errors.js';
import {
  completeRequestSchema,
  type GenerationDependencies,
  type GenerationOutcome,
  generateText,
  translateRequestSchema,
} from '../../core/generation/generate-text.js';
import { TEXTS } from '../../core/texts.js';
import type { HttpRequest, HttpResponse, RouteHandler } from '../http/http-route.js';
import { parseInput } from './request-parsing.js';

const configurationIdPattern = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,99}$/;

/** The configuration of a `/configurations/{id}/...` route; a malformed id is as unknown as a missing one. */
function configurationIdOf(request: HttpRequest): string {
  const configurationId = request.pathParameters.id ?? '';
  if (!configurationIdPattern.test(configurationId))
    throw new CountersignError('not-found', TEXTS.configurationNotFound);
  return configurationId;
}

function respond({ kind: _kind, ...outcome }: GenerationOutcome): HttpResponse {
  return { statusCode: 200, json: outcome };
}

/**
 * POST /configurations/{id}/complete and /translate: seed 003's configuration-driven text
 * generation, answered synchronously (no run, no tools, nothing to approve).
 */
export function createGenerateRoutes(dependencies: GenerationDependencies): Record<string, RouteHandler> {
  return {
    'POST /configurations/{id}/complete': async (request) => {
      const configurationId = configurationIdOf(request);
      const body = parseInput(completeRequestSchema, request.body, 'body');
      return respond(
        await generateText(dependencies, request.principal, configurationId, { operation: 'complete', body }),
      );
    },
    'POST /configurations/{id}/translate': async (request) => {
      const configurationId = configurationIdOf(request);
      const body = parseInput(translateRequestSchema, request.body, 'body');
      return respond(
        await generateText(dependencies, request.principal, configurationId, {
          operation: 'translate',
          body,
        }),
      );
    },
  };
}
