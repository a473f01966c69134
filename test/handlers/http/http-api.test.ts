import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import type { RouteDefinition, RouteFunction } from '../../../lambdas/contract/route-definition.js';
import { ROUTES, routesOfFunction } from '../../../lambdas/contract/routes.js';
import { CountersignError } from '../../../lambdas/core/errors.js';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import type { Logger } from '../../../lambdas/core/ports.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import {
  createHttpApi,
  type HttpRequest,
  type HttpResponse,
  MAX_BODY_BYTES,
  type RouteImplementations,
} from '../../../lambdas/handlers/http/http-api.js';
import { assertAdmin } from '../../../lambdas/handlers/routes/admin-routes.js';

function capturingLogger(): Logger & { lines: Array<{ level: string; message: string; fields: unknown }> } {
  const lines: Array<{ level: string; message: string; fields: unknown }> = [];
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push({ level, message, fields });
  };
  return { lines, debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

const USERS: UserProfile[] = [
  {
    userId: 'ana',
    displayName: 'Ana',
    grants: ['agent_run'],
    pageAccess: [],
    languageAccess: [],
    toolAccess: [],
  },
  {
    userId: 'root',
    displayName: 'Root',
    grants: ['admin'],
    pageAccess: [],
    languageAccess: [],
    toolAccess: [],
  },
];
const users = { getUser: async (userId: string) => USERS.find((user) => user.userId === userId) };

/** A value each path parameter's schema accepts (an id otherwise). */
const SAMPLE_PATH_VALUES: Record<string, string> = { index: '0', owner: 'tasks' };

/** A payload v2 event as API Gateway sends it, for a manifest path with its parameters filled in. */
function eventFor(
  method: string,
  path: string,
  options: {
    as?: string;
    body?: string;
    headers?: Record<string, string>;
    query?: Record<string, string>;
  } = {},
) {
  const pathParameters: Record<string, string> = {};
  const rawPath = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    pathParameters[name] = SAMPLE_PATH_VALUES[name] ?? `${name}-1`;
    return pathParameters[name];
  });
  return {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath,
    rawQueryString: '',
    headers: options.headers ?? (options.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(options.query ? { queryStringParameters: options.query } : {}),
    ...(Object.keys(pathParameters).length > 0 ? { pathParameters } : {}),
    ...(options.body === undefined ? {} : { body: options.body }),
    isBase64Encoded: false,
    requestContext: {
      requestId: 'request-123',
      http: { method, path: rawPath },
      ...(options.as ? { authorizer: { jwt: { claims: { sub: options.as }, scopes: [] } } } : {}),
    },
  } as never;
}

type AnyHandle = { handle(request: HttpRequest): Promise<HttpResponse> };

/** Every operation of a function answering its own name, or the given implementations. */
function echoRoutes<Function extends RouteFunction>(
  name: Function,
  overrides: Partial<Record<string, AnyHandle>> = {},
): RouteImplementations<Function> {
  return Object.fromEntries(
    routesOfFunction(name).map((route) => [
      route.operationId,
      overrides[route.operationId] ?? {
        handle: async (request: HttpRequest) => ({
          statusCode: 200,
          json: { operationId: route.operationId, path: request.path },
        }),
      },
    ]),
  ) as unknown as RouteImplementations<Function>;
}

/** The inbox API whose page route throws `thrown`. */
function inboxPageThrowing(thrown: unknown, logger: Logger) {
  const getInboxPage = {
    handle: async () => {
      throw thrown;
    },
  };
  return createHttpApi('api-inbox', echoRoutes('api-inbox', { getInboxPage }), { users, logger });
}

const parse = (response: { body?: string }) => JSON.parse(response.body ?? 'null');

describe('the HTTP API router', () => {
  it.each(
    ROUTES.filter((route) => route.function !== 'api-run-events' && route.auth !== 'slack-signature').map(
      (route) => [`${route.method} ${route.path}`, route],
    ),
  )('dispatches %s to its manifest operation, through its schemas', async (_name, route) => {
    // Prepare
    const body = (route as RouteDefinition).body;
    // `{}` reaches the operation, unless the entry's body schema refuses it: a 400 naming the body.
    const refused = body !== undefined && !z.safeParse(body, {}).success;
    const api = createHttpApi(route.function as 'api-runs', echoRoutes(route.function as 'api-runs'), {
      users,
      logger: capturingLogger(),
    });

    // Act
    const response = await api(
      eventFor(route.method, route.path, { as: 'root', ...(route.method === 'GET' ? {} : { body: '{}' }) }),
    );

    // Assess
    if (refused) {
      expect(response.statusCode).toBe(400);
      expect(parse(response).error.field).toMatch(/^body\b/);
    } else {
      expect(response.statusCode).toBe(200);
      expect(parse(response).operationId).toBe(route.operationId);
    }
  });

  it('never serves a route that authenticates itself (Slack’s signature) through the router', () => {
    // Act
    const build = () =>
      createHttpApi('slack-interactions', {} as never, { users, logger: capturingLogger() });

    // Assess
    expect(build).toThrow('receiveSlackInteraction has its own handler, not slack-interactions.');
  });

  it('answers a path its function does not serve with a 404 in the API error shape', async () => {
    // Prepare
    const api = createHttpApi('api-runs', echoRoutes('api-runs'), { users, logger: capturingLogger() });

    // Act
    const response = await api(eventFor('GET', '/inbox', { as: 'ana' }));

    // Assess
    expect(response.statusCode).toBe(404);
    expect(parse(response)).toEqual({ error: { code: 'not-found', message: TEXTS.routeNotFound } });
  });

  it.each([
    ['an unknown error', new TypeError('secret text')],
    ['an internal countersign error', new CountersignError('internal', 'secret text', { expose: false })],
    [
      'a refused sealed state (a 500 whose message is exposed)',
      new CountersignError('sealed-state-rejected', 'x'),
    ],
  ])('writes exactly one ERROR line with the request id for %s', async (_name, thrown) => {
    // Prepare
    const logger = capturingLogger();
    const api = inboxPageThrowing(thrown, logger);

    // Act
    const response = await api(eventFor('GET', '/'));

    // Assess
    expect(response.statusCode).toBe(500);
    const errors = logger.lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      message: 'request failed',
      fields: { requestId: 'request-123', status: 500 },
    });
    expect(JSON.stringify(logger.lines)).not.toContain('secret text');
    expect(response.body).not.toContain('secret text');
    // http-error-handler writes it; one content-type header, the API's own.
    expect(Object.keys(response.headers ?? {}).filter((name) => /^content-type$/i.test(name))).toEqual([
      'content-type',
    ]);
  });

  it('writes no ERROR line for a 4xx, and passes its message on', async () => {
    // Prepare
    const logger = capturingLogger();
    const api = inboxPageThrowing(new CountersignError('gone', 'It is gone.'), logger);

    // Act
    const response = await api(eventFor('GET', '/'));

    // Assess
    expect(response.statusCode).toBe(410);
    expect(parse(response)).toEqual({ error: { code: 'gone', message: 'It is gone.' } });
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
  });

  it('refuses a jwt route without a subject claim with 401, and serves a public one without', async () => {
    // Prepare
    const api = createHttpApi('api-inbox', echoRoutes('api-inbox'), { users, logger: capturingLogger() });

    // Act
    const refused = await api(eventFor('GET', '/inbox'));
    const served = await api(eventFor('GET', '/'));

    // Assess
    expect(refused.statusCode).toBe(401);
    expect(parse(refused).error.message).toBe(TEXTS.bearerTokenInvalid);
    expect(served.statusCode).toBe(200);
  });
});

describe('the HTTP API body and validation middlewares', () => {
  // The decision's body, as the manifest's entry for POST /runs/{id}/decision says it (strict, optional).
  const received = {
    handle: async (request: HttpRequest) => ({ statusCode: 202, json: { received: request.body } }),
  };
  const decisionApi = () =>
    createHttpApi('api-decision', echoRoutes('api-decision', { decideRun: received, setAway: received }), {
      users,
      logger: capturingLogger(),
    });

  it.each([
    ['malformed JSON', '{"digest": ', 'application/json', 400, TEXTS.bodyNotJson],
    ['a non-JSON content type', '{"digest":"x"}', 'text/plain', 400, TEXTS.bodyNotJsonContentType],
    [
      'a __proto__ key',
      '{"digest":"x","__proto__":{"admin":true}}',
      'application/json',
      400,
      TEXTS.bodyForbiddenKey,
    ],
    [
      'a body over 64 KiB',
      JSON.stringify({ digest: 'x'.repeat(MAX_BODY_BYTES) }),
      'application/json',
      413,
      TEXTS.bodyTooLarge(MAX_BODY_BYTES),
    ],
    [
      'an unknown field',
      '{"digest":"x","decision":"approve","slow":1}',
      'application/json',
      400,
      'body.slow: unknown field',
    ],
    ['a mistyped field', '{"digest":1,"decision":"approve"}', 'application/json', 400, /^body\.digest: /],
  ])('answers %s with %i naming the body', async (_name, body, contentType, status, message) => {
    // Act
    const response = await decisionApi()(
      eventFor('POST', '/runs/{id}/decision', { as: 'ana', body, headers: { 'content-type': contentType } }),
    );

    // Assess
    expect(response.statusCode).toBe(status);
    expect(parse(response).error.message).toMatch(message);
  });

  it('refuses a missing body where one is required, and reads it as {} where it is optional', async () => {
    // Act
    const required = await decisionApi()(eventFor('PUT', '/users/{id}/away', { as: 'ana' }));
    const optional = await decisionApi()(eventFor('POST', '/runs/{id}/decision', { as: 'ana' }));

    // Assess
    expect(parse(required).error).toMatchObject({ message: TEXTS.bodyRequired, field: 'body' });
    expect(optional.statusCode).toBe(400);
    expect(parse(optional).error.field).toBe('body.decision');
  });

  it('hands the route the body as its manifest entry parsed it', async () => {
    // Act
    const response = await decisionApi()(
      eventFor('POST', '/runs/{id}/decision', { as: 'ana', body: '{"digest":"abc","decision":"approve"}' }),
    );

    // Assess
    expect(response.statusCode).toBe(202);
    expect(parse(response)).toEqual({ received: { digest: 'abc', decision: 'approve' } });
  });

  it('checks the admin grant before it validates the body (a non-admin learns nothing from a 400)', async () => {
    // Prepare
    const api = createHttpApi(
      'api-admin',
      echoRoutes('api-admin'),
      { users, logger: capturingLogger() },
      { authorize: assertAdmin },
    );

    // Act
    const response = await api(eventFor('PUT', '/admin/tasks/{id}', { as: 'ana', body: '{"unknown":1}' }));

    // Assess
    expect(response.statusCode).toBe(403);
    expect(parse(response).error.message).toBe(TEXTS.grantRefused('admin'));
  });
});

describe('the HTTP API content negotiation', () => {
  const api = createHttpApi(
    'api-inbox',
    echoRoutes('api-inbox', {
      // JSON or HTML: the manifest's entry answers both.
      listInbox: {
        handle: async (request: HttpRequest) =>
          request.mediaType === 'text/html'
            ? { statusCode: 200, html: '<p>cards</p>' }
            : { statusCode: 200, json: { cards: [] } },
      },
    }),
    { users, logger: capturingLogger() },
  );

  it.each([
    ['no Accept header', undefined, 'application/json'],
    ['the page (text/html)', 'text/html', 'text/html'],
    ['a browser navigation', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'text/html'],
    ['JSON', 'application/json', 'application/json'],
    ['a type neither is (no 406: the default)', 'image/png', 'application/json'],
  ])('answers %s with %s', async (_name, accept, expected) => {
    // Act
    const response = await api(
      eventFor('GET', '/inbox', { as: 'ana', headers: accept === undefined ? {} : { accept } }),
    );

    // Assess
    expect(response.statusCode).toBe(200);
    expect(String(response.headers?.['content-type'])).toContain(expected);
  });
});
