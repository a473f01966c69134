import middy from '@middy/core';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { type InvocationFields, runInInvocationScope } from '../../adapters/invocation-scope.js';
import { CountersignError, describeErrorClass } from '../../core/errors.js';
import type { UserProfile } from '../../core/identity.js';
import type { Logger, UserDirectory } from '../../core/ports.js';
import type { PrincipalSource } from '../../core/principal.js';
import type { RunSettings } from '../../core/runs/run-dependencies.js';
import { errorResponse, JSON_HEADERS } from './http-errors.js';
import { identifyPrincipal, type Principal } from './read-principal.js';

/** Request bodies are small JSON documents; anything larger is refused before parsing. */
export const MAX_BODY_BYTES = 64 * 1024;

export interface HttpRequest {
  principal: UserProfile;
  /** Whether the principal has a user record, or only their identity provider's groups. */
  principalSource: PrincipalSource;
  method: string;
  pathParameters: Record<string, string | undefined>;
  query: Record<string, string | undefined>;
  headers: Record<string, string | undefined>;
  /** The parsed JSON body, `undefined` when there was none. */
  body: unknown;
}

export type HttpResponse =
  | { statusCode: number; json: unknown }
  | { statusCode: number; html: string; headers?: Record<string, string> };

export type RouteHandler = (request: HttpRequest) => Promise<HttpResponse>;

export type HttpLambdaHandler = (
  event: APIGatewayProxyEventV2WithJWTAuthorizer,
) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * An API Lambda: routes by `routeKey`, reads the principal from the JWT claims, parses the
 * JSON body, and maps errors to HTTP at this edge only. Unknown errors become a 500 that
 * says nothing; their class alone goes to the log.
 */
export function createHttpHandler(
  routes: Record<string, RouteHandler>,
  dependencies: {
    users: Pick<UserDirectory, 'getUser'>;
    logger: Logger;
    settings?: Pick<RunSettings, 'identityGroupGrants'>;
  },
  options: { publicRoutes?: readonly string[] } = {},
): HttpLambdaHandler {
  const publicRoutes = new Set(options.publicRoutes ?? []);
  const handle = async (
    event: APIGatewayProxyEventV2WithJWTAuthorizer,
  ): Promise<APIGatewayProxyStructuredResultV2> => {
    const route = routes[event.routeKey];
    if (!route) throw new CountersignError('not-found', `No route ${event.routeKey}.`);
    const { profile: principal, source: principalSource } = publicRoutes.has(event.routeKey)
      ? anonymous
      : await identifyPrincipal(event, dependencies.users, dependencies.settings?.identityGroupGrants);
    const response = await route({
      principal,
      principalSource,
      method: event.requestContext?.http?.method ?? event.routeKey.split(' ')[0] ?? 'GET',
      pathParameters: event.pathParameters ?? {},
      query: event.queryStringParameters ?? {},
      headers: event.headers ?? {},
      body: parseBody(event),
    });
    return toResult(response);
  };
  const handler = middy<APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2>(
    handle,
  ).onError(async (request) => {
    const error = request.error;
    const response = errorResponse(error);
    // Every 5xx writes one ERROR line with the request id (and the class, never the message).
    if ((response.statusCode ?? 500) >= 500) {
      dependencies.logger.error('request failed', {
        requestId: request.event?.requestContext?.requestId ?? 'unknown',
        routeKey: request.event?.routeKey,
        status: response.statusCode,
        errorClass: describeErrorClass(error),
        code: error instanceof CountersignError ? error.code : undefined,
      });
    }
    request.response = response;
  }) as unknown as HttpLambdaHandler;
  return (event) => runInInvocationScope(describeHttpInvocation(event), () => handler(event));
}

/** The identifiers a request's log lines carry; API Gateway's request id is the correlation id. */
function describeHttpInvocation(event: APIGatewayProxyEventV2WithJWTAuthorizer): InvocationFields {
  // A path parameter is client input: an identifier's length at most.
  const runId = event.pathParameters?.id?.slice(0, 100);
  return {
    correlationId: event.requestContext?.requestId ?? 'unknown',
    operation: event.routeKey,
    ...(runId === undefined ? {} : { runId }),
  };
}

const anonymous: Principal = {
  profile: { userId: '', displayName: '', grants: [], pageAccess: [], languageAccess: [], toolAccess: [] },
  source: 'identity-provider',
};

function parseBody(event: APIGatewayProxyEventV2WithJWTAuthorizer): unknown {
  if (event.body === undefined || event.body === null || event.body === '') return undefined;
  const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (raw.byteLength > MAX_BODY_BYTES) {
    throw new CountersignError('payload-too-large', `body: larger than ${MAX_BODY_BYTES} bytes.`, {
      field: 'body',
    });
  }
  const contentType = event.headers?.['content-type'] ?? '';
  if (contentType && !/^application\/json\b/i.test(contentType)) {
    throw new CountersignError('bad-request', 'body: send JSON with content-type application/json.', {
      field: 'body',
    });
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new CountersignError('bad-request', 'body: not valid JSON.', { field: 'body' });
  }
}

function toResult(response: HttpResponse): APIGatewayProxyStructuredResultV2 {
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
