import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import type { RouteDefinition } from '../../../lambdas/contract/route-definition.js';
import { ROUTES } from '../../../lambdas/contract/routes.js';
import { CountersignError } from '../../../lambdas/core/errors.js';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import { silentLogger } from '../../../lambdas/core/ports.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { createHttpApi, type RouteImplementations } from '../../../lambdas/handlers/http/http-api.js';
import { parsePathParameters } from '../../../lambdas/handlers/http/path-parameters.js';
import { createRunEventsRoute } from '../../../lambdas/handlers/routes/events-routes.js';

/** What a client may put in a path segment to probe a route (decoded, as API Gateway hands it on). */
const HOSTILE_VALUES: ReadonlyArray<readonly [string, string]> = [
  ['over-long', 'a'.repeat(5000)],
  ['control characters', 'a\u0000b\r\nc\u001b'],
  ['a parent segment', '..'],
  ['an encoded slash', '../../etc/passwd'],
  ['a percent-encoding left encoded', '%2F..%2Fx'],
  ['a unicode lookalike', 'run\u2215one'],
];

/** A value each path parameter's schema accepts. */
const SAMPLE_PATH_VALUES: Record<string, string> = { id: 'r-1', index: '0', owner: 'tasks', skillId: 's-1' };

const entriesWithPathParameters = (ROUTES as readonly RouteDefinition[]).filter(
  (route) => route.pathParameters !== undefined,
);

const parameterNamesOf = (route: RouteDefinition): string[] =>
  [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);

describe('path parameters, parsed once from the route table', () => {
  it.each(entriesWithPathParameters.map((route) => [route.operationId, route] as const))(
    '%s: every parameter of the path has a schema, and every refusal names one of them',
    (_operation, route) => {
      // Act
      const schemaNames = Object.keys(route.pathParameters?._zod.def.shape ?? {});

      // Assess
      expect(schemaNames.sort()).toEqual(parameterNamesOf(route).sort());
      for (const name of Object.keys(route.pathRefusals ?? {})) expect(schemaNames).toContain(name);
    },
  );

  const cases = entriesWithPathParameters.flatMap((route) =>
    parameterNamesOf(route).flatMap((name) =>
      HOSTILE_VALUES.map(([label, value]) => [route.operationId, name, label, route, value] as const),
    ),
  );

  it.each(cases)(
    '%s: {%s} %s is handed on as the schema reads it, or refused as the entry says',
    (_operation, name, _label, route, value) => {
      // Prepare
      const raw = { ...Object.fromEntries(parameterNamesOf(route).map((n) => [n, SAMPLE_PATH_VALUES[n]])) };
      raw[name] = value;
      const refusal = route.pathRefusals?.[name];
      const schema = route.pathParameters?._zod.def.shape[name];
      const accepted =
        refusal?.kind === 'unread' || (schema !== undefined && z.safeParse(schema, value).success);

      // Act
      const read = () => parsePathParameters(route, raw);

      // Assess
      if (accepted) {
        expect(read()[name as never]).toBe(value);
        return;
      }
      let thrown: unknown;
      try {
        read();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(CountersignError);
      const error = thrown as CountersignError;
      if (refusal?.kind === 'not-found') {
        expect(error.code).toBe('not-found');
        expect(error.message).toBe(
          typeof refusal.message === 'string' ? refusal.message : refusal.message(raw),
        );
      } else if (refusal?.kind === 'bad-request') {
        expect([error.code, error.message, error.field]).toEqual(['bad-request', refusal.message, name]);
      } else {
        expect([error.code, error.field]).toEqual(['bad-request', `path.${name}`]);
      }
    },
  );

  it('refuses no parameter in any entry with the default 400: each states its refusal', () => {
    // Act
    const unstated = entriesWithPathParameters.flatMap((route) =>
      parameterNamesOf(route)
        .filter((name) => route.pathRefusals?.[name] === undefined)
        .map((name) => `${route.operationId} {${name}}`),
    );

    // Assess
    expect(unstated).toEqual([]);
  });
});

/** A payload v2 event of a signed-in admin for a path whose parameters are given decoded. */
function eventFor(method: string, path: string, pathParameters: Record<string, string>, body?: unknown) {
  return {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    pathParameters,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    isBase64Encoded: false,
    requestContext: {
      requestId: 'request-1',
      http: { method, path },
      authorizer: { jwt: { claims: { sub: 'root', 'cognito:groups': '[admin]' }, scopes: [] } },
    },
  } as never;
}

const ROOT: UserProfile = {
  userId: 'root',
  displayName: 'Root',
  grants: ['admin', 'agent_run', 'agent_approve'],
  pageAccess: [],
  languageAccess: [],
  toolAccess: [],
};
const users = { getUser: async (userId: string) => (userId === 'root' ? ROOT : undefined) };

/** Every operation of a function answering the path it was handed. */
function echoRoutes(name: RouteDefinition['function']) {
  return Object.fromEntries(
    ROUTES.filter((route) => route.function === name).map((route) => [
      route.operationId,
      { handle: async (request: { path: unknown }) => ({ statusCode: 200, json: { path: request.path } }) },
    ]),
  ) as unknown as RouteImplementations<'api-runs'>;
}

const long = 'a'.repeat(3000);

describe('the router answers a hostile path parameter with its route’s documented refusal', () => {
  it.each([
    ['api-runs', 'GET', '/runs/{id}', { id: '..' }, undefined, 404, TEXTS.runNotFound],
    ['api-runs', 'GET', '/runs/{id}/audit', { id: long }, undefined, 404, TEXTS.runNotFound],
    ['api-runs', 'POST', '/runs/{id}/cancel', { id: 'a/b' }, undefined, 404, TEXTS.runNotFound],
    [
      'api-decision',
      'DELETE',
      '/users/{id}/away',
      { id: 'a'.repeat(201) },
      undefined,
      404,
      'No user with this id.',
    ],
    [
      'api-inbox',
      'GET',
      '/runs/{id}/calls/{index}',
      { id: 'r\u0000', index: '/' },
      undefined,
      404,
      TEXTS.runNotFound,
    ],
    [
      'api-admin',
      'GET',
      '/admin/slack-users/{id}',
      { id: long },
      undefined,
      404,
      'No slack-user with this id.',
    ],
    [
      'api-admin',
      'GET',
      '/admin/skills/{skillId}',
      { skillId: long },
      undefined,
      404,
      `No skill "${'a'.repeat(100)}".`,
    ],
    [
      'api-admin',
      'PUT',
      '/admin/skills/attachments/{owner}/{id}',
      { owner: '..', id: 'x' },
      { skillIds: [] },
      404,
      'No such skills resource.',
    ],
    [
      'api-admin',
      'PUT',
      '/admin/skills/attachments/{owner}/{id}',
      { owner: 'tasks', id: 'a'.repeat(101) },
      { skillIds: [] },
      404,
      'No task with this id.',
    ],
  ] as const)('%s %s %s', async (name, method, path, pathParameters, body, status, message) => {
    // Prepare
    const api = createHttpApi(name as 'api-runs', echoRoutes(name) as never, { users, logger: silentLogger });

    // Act
    const response = await api(eventFor(method, path, pathParameters, body));

    // Assess
    expect(response.statusCode).toBe(status);
    expect(JSON.parse(response.body ?? '')).toEqual({ error: { code: 'not-found', message } });
  });

  it('answers a call position that is no whole number with a 400 naming `index`', async () => {
    // Prepare
    const api = createHttpApi('api-inbox', echoRoutes('api-inbox') as never, { users, logger: silentLogger });

    // Act
    const response = await api(eventFor('GET', '/runs/{id}/calls/{index}', { id: 'r-1', index: '../0' }));

    // Assess
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body ?? '')).toEqual({
      error: { code: 'bad-request', message: TEXTS.callIndexInvalid, field: 'index' },
    });
  });

  it('refuses the body before the path, as it would for an unknown run', async () => {
    // Prepare
    const api = createHttpApi('api-decision', echoRoutes('api-decision') as never, {
      users,
      logger: silentLogger,
    });

    // Act
    const response = await api(eventFor('POST', '/runs/{id}/decision', { id: '..' }, { decision: 'maybe' }));

    // Assess
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body ?? '').error.field).toBe('body.decision');
  });

  it('serves the card page at any address: its script reads the run id', async () => {
    // Prepare
    const api = createHttpApi('api-inbox', echoRoutes('api-inbox') as never, { users, logger: silentLogger });

    // Act
    const response = await api(eventFor('GET', '/inbox/runs/{id}', { id: '..' }));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body ?? '')).toEqual({ path: { id: '..' } });
  });

  it('hands an id the schema accepts to the operation exactly as decoded', async () => {
    // Prepare
    const api = createHttpApi('api-admin', echoRoutes('api-admin') as never, { users, logger: silentLogger });

    // Act
    const response = await api(eventFor('GET', '/admin/users/{id}', { id: '../x\u0000' }));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body ?? '')).toEqual({ path: { id: '../x\u0000' } });
  });
});

describe('the event stream reads its run id from the same table entry', () => {
  it.each(HOSTILE_VALUES)(
    'answers %s as an unknown run (404), before anything is read',
    async (_label, id) => {
      // Prepare
      const written: { status?: number; body: string } = { body: '' };
      const route = createRunEventsRoute({ users, logger: silentLogger } as never);

      // Act
      await route(
        {
          requestContext: {
            requestId: 'request-1',
            authorizer: { jwt: { claims: { sub: 'root' }, scopes: [] } },
          },
          pathParameters: { id },
        } as never,
        {
          setHeaders: (status: number) => {
            written.status = status;
          },
          write: (chunk: string) => {
            written.body += chunk;
          },
          end: () => undefined,
          onClose: () => undefined,
        },
      );

      // Assess
      expect(written.status).toBe(404);
      expect(JSON.parse(written.body)).toEqual({ error: { code: 'not-found', message: TEXTS.runNotFound } });
    },
  );
});
