import type middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import type { RouteAuth } from '../../contract/route-definition.js';
import { CountersignError, nameErrorClass } from '../../core/errors.js';
import type { UserProfile } from '../../core/identity.js';
import type { Logger, UserDirectory } from '../../core/ports.js';
import type { IdentityGroupGrants } from '../../core/principal.js';
import { TEXTS } from '../../core/texts.js';
import type { HttpApiEvent } from './http-api-event.js';
import { badRequestFrom, errorResponse, JSON_HEADERS } from './http-errors.js';
import { type PathSchemas, parsePathParameters } from './path-parameters.js';
import { identifyPrincipal, type Principal } from './read-principal.js';

/** Request bodies are small JSON documents; anything larger is refused before parsing. */
export const MAX_BODY_BYTES = 64 * 1024;

/** What the middlewares below hand a route: middy's idiom is the Lambda context (as content negotiation does). */
export interface RouteContext extends Context {
  principal?: Principal;
  /** Set by `@middy/http-content-negotiation` on routes that answer more than one media type. */
  preferredMediaType?: string;
  /** The body, query and path parameters as the route's schemas parsed them. */
  input?: { body: unknown; query: unknown; path: unknown };
}

type Result = APIGatewayProxyStructuredResultV2;
type Middleware = middy.MiddlewareObj<HttpApiEvent, Result, Error, RouteContext>;

/**
 * `@middy/http-json-body-parser` behind countersign's limits: no body is `undefined` (a bare POST
 * cancel), more than 64 KiB is a 413, a non-JSON content type or unparseable JSON a 400 naming
 * `body` (the parser's own 415/422 would not say which field).
 */
export function jsonBody(maxBytes = MAX_BODY_BYTES): Middleware {
  const parser = httpJsonBodyParser({ disableContentTypeCheck: true }) as unknown as Required<Middleware>;
  return {
    before: async (request) => {
      const { event } = request;
      if (event.body === undefined || event.body === null || event.body === '') {
        event.body = undefined;
        return;
      }
      if (Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8') > maxBytes) {
        throw new CountersignError('payload-too-large', TEXTS.bodyTooLarge(maxBytes), { field: 'body' });
      }
      const contentType = event.headers?.['content-type'] ?? '';
      if (contentType && !/^application\/json\b/i.test(contentType)) {
        throw new CountersignError('bad-request', TEXTS.bodyNotJsonContentType, { field: 'body' });
      }
      try {
        await parser.before(request);
      } catch (error) {
        // The parser refuses `__proto__` and `constructor.prototype` keys outright (422).
        const forbidden = (error as { message?: unknown }).message === 'Forbidden key in JSON body';
        throw new CountersignError('bad-request', forbidden ? TEXTS.bodyForbiddenKey : TEXTS.bodyNotJson, {
          field: 'body',
        });
      }
    },
  };
}

/**
 * Who is asking, before anything reads the request: the verified token's claims (API Gateway's
 * JWT authorizer, or the local issuer) on a `jwt` route; nobody on a public one. `authorize`
 * refuses a principal before the body is even validated (the admin API's grant).
 */
export function resolvePrincipal(options: {
  readonly auth: RouteAuth;
  readonly users: Pick<UserDirectory, 'getUser'>;
  readonly groupGrants?: IdentityGroupGrants;
  readonly authorize?: (principal: UserProfile) => void;
}): Middleware {
  return {
    before: async (request) => {
      if (options.auth === 'none') {
        request.context.principal = ANONYMOUS;
        return;
      }
      const principal = await identifyPrincipal(request.event, options.users, options.groupGrants);
      options.authorize?.(principal.profile);
      request.context.principal = principal;
    },
  };
}

const ANONYMOUS: Principal = {
  profile: { userId: '', displayName: '', grants: [], pageAccess: [], languageAccess: [], toolAccess: [] },
  source: 'identity-provider',
};

/** The zod schemas a route's input must satisfy, and how its path parameters are refused. */
export interface RequestSchemas extends PathSchemas {
  readonly body?: zc.$ZodType;
  /** A route whose body may be left out reads a missing one as `{}`. */
  readonly bodyOptional?: boolean;
  readonly query?: zc.$ZodType;
}

/**
 * Validates the body and query against the route's zod schemas (a 400 naming the first
 * offending field), then the path parameters: a malformed id is found out where an unknown one
 * would be, after the body and query (as each route's entry says to refuse it). By hand rather than `@middy/validator`: that one compiles JSON Schema with
 * Ajv, and these schemas are zod, with zod's coercions, defaults and messages.
 */
export function validateRequest(schemas: RequestSchemas): Middleware {
  return {
    before: (request) => {
      const { event } = request;
      const body: unknown = event.body;
      const query = event.queryStringParameters ?? {};
      const parsedBody = schemas.body
        ? parseInput(schemas.body, body === undefined && schemas.bodyOptional ? {} : body, 'body')
        : body;
      const parsedQuery = schemas.query ? parseInput(schemas.query, query, 'query') : query;
      const path = parsePathParameters(schemas, event.pathParameters ?? {});
      request.context.input = { body: parsedBody, query: parsedQuery, path };
    },
  };
}

/** Parses client input with a schema; a failure is a 400 naming the first offending field. */
export function parseInput<Schema extends zc.$ZodType>(
  schema: Schema,
  value: unknown,
  prefix: string,
): z.infer<Schema> {
  if (value === undefined && prefix === 'body') {
    throw new CountersignError('bad-request', TEXTS.bodyRequired, { field: 'body' });
  }
  const parsed = z.safeParse(schema, value ?? {});
  if (!parsed.success) throw badRequestFrom(parsed.error, prefix);
  return parsed.data;
}

/**
 * Errors to HTTP at this edge only, for `@middy/http-error-handler` to write: a countersign
 * error with a client-facing message keeps its status and message; anything else is a 500 that
 * says nothing. Every 5xx writes one ERROR line with the request id and the class, never the message.
 */
export function exposeErrors(logger: Logger): Middleware {
  return {
    onError: (request) => {
      const error = request.error;
      const response = errorResponse(error);
      const statusCode = response.statusCode ?? 500;
      if (statusCode >= 500) {
        logger.error('request failed', {
          requestId: request.event?.requestContext?.requestId ?? 'unknown',
          routeKey: request.event?.routeKey,
          status: statusCode,
          errorClass: nameErrorClass(error),
          code: error instanceof CountersignError ? error.code : undefined,
        });
      }
      request.error = Object.assign(new Error(String(response.body)), {
        statusCode,
        expose: true,
        // JSON_HEADERS, and `retry-after` when a quota or a transient fault says when to come back.
        headers: { ...JSON_HEADERS, ...(response.headers as Record<string, string>) },
      });
    },
  };
}

/**
 * One spelling per header: http-error-handler names `Content-Type` beside the lower-case
 * headers every other response carries, and a client must not read two.
 */
export function lowerCaseHeaders(): Middleware {
  const lowerCase = (request: middy.Request<HttpApiEvent, Result, Error, RouteContext>) => {
    const headers = request.response?.headers;
    if (!request.response || !headers) return;
    const merged: Record<string, string | number | boolean> = {};
    // Lower-case names are set last, so the edge's own value wins over the library's default.
    const entries = Object.entries(headers).sort(
      ([left], [right]) => Number(left === left.toLowerCase()) - Number(right === right.toLowerCase()),
    );
    for (const [name, value] of entries) merged[name.toLowerCase()] = value;
    request.response.headers = merged;
  };
  return { onError: lowerCase };
}
