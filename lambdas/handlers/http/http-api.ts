import middy from '@middy/core';
import httpContentNegotiation from '@middy/http-content-negotiation';
import httpErrorHandler from '@middy/http-error-handler';
import httpRouterHandler from '@middy/http-router';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import { type InvocationFields, runInInvocationScope } from '../../adapters/invocation-scope.js';
import {
  mediaTypesOf,
  type RouteAuth,
  type RouteDefinition,
  type RouteFunction,
} from '../../contract/route-definition.js';
import {
  type OperationId,
  type OperationOf,
  type Route,
  type RouteOf,
  routesOfFunction,
} from '../../contract/routes.js';
import { CountersignError } from '../../core/errors.js';
import type { UserProfile } from '../../core/identity.js';
import type { Logger, UserDirectory } from '../../core/ports.js';
import type { PrincipalSource } from '../../core/principal.js';
import type { RunSettings } from '../../core/run-dependencies.js';
import { TEXTS } from '../../core/texts.js';
import { answerConditionally } from './conditional-response.js';
import type { HttpApiEvent } from './http-api-event.js';
import { errorBody, JSON_HEADERS } from './http-errors.js';
import {
  exposeErrors,
  jsonBody,
  lowerCaseHeaders,
  type RouteContext,
  resolvePrincipal,
  validateRequest,
} from './http-middlewares.js';
import type { PathOf } from './path-parameters.js';

export { MAX_BODY_BYTES } from './http-middlewares.js';

export interface HttpRequest<
  Body = unknown,
  Query = Record<string, string | undefined>,
  Path = Record<string, never>,
> {
  principal: UserProfile;
  /** Whether the principal has a user record, or only their identity provider's groups. */
  principalSource: PrincipalSource;
  /** The path parameters as the manifest entry's schemas parsed them (a refused one never gets here). */
  path: Path;
  query: Query;
  headers: Record<string, string | undefined>;
  /** The body as the manifest entry's schema parsed it; without a schema, the parsed JSON or `undefined`. */
  body: Body;
  /** The media type content negotiation chose among those the route answers (JSON otherwise). */
  mediaType: string;
}

export type HttpResponse =
  | { statusCode: number; json: unknown }
  | { statusCode: number; html: string; headers?: Record<string, string> }
  /** A script module the page loads (its sign-in library). */
  | { statusCode: number; script: string; headers?: Record<string, string> };

type BodyOf<Entry> = Entry extends { body: infer Schema extends zc.$ZodType } ? z.output<Schema> : unknown;
type QueryOf<Entry> = Entry extends { query: infer Schema extends zc.$ZodType }
  ? z.output<Schema>
  : Record<string, string | undefined>;

/** A request of one operation: its body, query and path as its manifest entry's schemas parsed them. */
export type RequestOf<Id extends OperationId> = HttpRequest<
  BodyOf<RouteOf<Id>>,
  QueryOf<RouteOf<Id>>,
  PathOf<RouteOf<Id>>
>;

/**
 * What one operation does with its request: its schemas, media types and conditional answer are
 * the manifest's (contract/routes.ts), so the router has validated the input before `handle` runs.
 */
export interface RouteImplementation<Id extends OperationId> {
  handle(request: RequestOf<Id>): Promise<HttpResponse>;
}

/** The implementations of every operation the manifest gives one function: no more, no fewer. */
export type RouteImplementations<Function extends RouteFunction> = {
  readonly [Id in OperationOf<Function>]: RouteImplementation<Id>;
};

export type HttpLambdaHandler = (event: HttpApiEvent) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * What every API Lambda's edge uses: the user directory (the principal's grants), a logger, and
 * the settings' mapping of identity-provider groups to grants.
 */
export interface HttpApiDependencies {
  users: Pick<UserDirectory, 'getUser'>;
  logger: Logger;
  settings?: Pick<RunSettings, 'identityGroupGrants'>;
}

/**
 * An API Lambda: middy's router dispatches the manifest's routes of `name` to their
 * implementations; each route resolves the principal (unless public), negotiates the media type,
 * validates its input with zod, and answers. Errors map to HTTP at this edge only.
 *
 * @example
 * export const handler = createHttpApi('api-runs', createRunsRoutes(dependencies), dependencies);
 */
export function createHttpApi<Function extends RouteFunction>(
  name: Function,
  implementations: RouteImplementations<Function>,
  dependencies: HttpApiDependencies,
  options: { readonly authorize?: (principal: UserProfile) => void } = {},
): HttpLambdaHandler {
  const routes = routesOfFunction(name).map((route) => {
    if (route.auth === 'slack-signature') {
      // Such a route authenticates its request itself, before reading it: never through this router.
      throw new CountersignError('configuration', `${route.operationId} has its own handler, not ${name}.`);
    }
    const implementation = (implementations as Record<string, AnyRouteImplementation | undefined>)[
      route.operationId
    ];
    if (!implementation) {
      throw new CountersignError('configuration', `No implementation of ${route.operationId} in ${name}.`);
    }
    return {
      method: route.method,
      path: route.path,
      handler: createRouteHandler(route, implementation, dependencies, options.authorize),
    };
  });
  const router = httpRouterHandler<HttpApiEvent, APIGatewayProxyStructuredResultV2>({
    routes,
    notFoundResponse: () => {
      throw new CountersignError('not-found', TEXTS.routeNotFound);
    },
  });
  const handler = middy<HttpApiEvent, APIGatewayProxyStructuredResultV2, Error, RouteContext>(router as never)
    .use(lowerCaseHeaders())
    .use(httpErrorHandler({ logger: false, fallbackMessage: errorBody('internal', TEXTS.internalError) }))
    .use(exposeErrors(dependencies.logger))
    .use(jsonBody()) as unknown as HttpLambdaHandler;
  return (event) => runInInvocationScope(collectHttpInvocationLogFields(event), () => handler(event));
}

/** A route of any operation: what the router holds once it matched the manifest's entry. */
// biome-ignore lint/suspicious/noExplicitAny: each operation has its own request type.
type AnyRouteImplementation = { handle(request: HttpRequest<any, any, any>): Promise<HttpResponse> };

function createRouteHandler(
  route: Route & { auth: Exclude<RouteAuth, 'slack-signature'> },
  implementation: AnyRouteImplementation,
  dependencies: HttpApiDependencies,
  authorize: ((principal: UserProfile) => void) | undefined,
) {
  const serve = async (event: HttpApiEvent, context: RouteContext) => {
    const principal = context.principal;
    if (!principal) throw new CountersignError('internal', 'No principal was resolved.');
    const response = await implementation.handle({
      principal: principal.profile,
      principalSource: principal.source,
      path: context.input?.path,
      query: context.input?.query as Record<string, string | undefined>,
      headers: event.headers ?? {},
      body: context.input?.body,
      mediaType: context.preferredMediaType ?? 'application/json',
    });
    const result = toResult(response);
    return 'conditional' in route && route.conditional
      ? answerConditionally(result, event.headers?.['if-none-match'])
      : result;
  };
  const handler = middy<HttpApiEvent, APIGatewayProxyStructuredResultV2, Error, RouteContext>(serve).use(
    resolvePrincipal({
      auth: route.auth,
      users: dependencies.users,
      ...(dependencies.settings?.identityGroupGrants
        ? { groupGrants: dependencies.settings.identityGroupGrants }
        : {}),
      ...(authorize && route.auth !== 'none' ? { authorize } : {}),
    }),
  );
  const mediaTypes = mediaTypesOf(route);
  if (mediaTypes) {
    handler.use(
      httpContentNegotiation({
        parseCharsets: false,
        parseEncodings: false,
        parseLanguages: false,
        availableMediaTypes: [...mediaTypes],
        // An `Accept` that names neither gets the default, as before: never a 406.
        defaultToFirstMediaType: true,
        failOnMismatch: false,
      }),
    );
  }
  return handler.use(validateRequest(route as RouteDefinition));
}

/** The identifiers a request's log lines carry; API Gateway's request id is the correlation id. */
function collectHttpInvocationLogFields(event: HttpApiEvent): InvocationFields {
  // A path parameter is client input: an identifier's length at most.
  const runId = event.pathParameters?.id?.slice(0, 100);
  return {
    correlationId: event.requestContext?.requestId ?? 'unknown',
    operation: event.routeKey,
    ...(runId === undefined ? {} : { runId }),
  };
}

function toResult(response: HttpResponse): APIGatewayProxyStructuredResultV2 {
  if ('script' in response) {
    return {
      statusCode: response.statusCode,
      headers: {
        'content-type': 'text/javascript; charset=utf-8',
        'x-content-type-options': 'nosniff',
        ...response.headers,
      },
      body: response.script,
    };
  }
  if ('json' in response) {
    return {
      statusCode: response.statusCode,
      headers: { ...JSON_HEADERS },
      body: JSON.stringify(response.json),
    };
  }
  return {
    statusCode: response.statusCode,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      ...response.headers,
    },
    body: response.html,
  };
}
