import { PassThrough, type Writable } from 'node:stream';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { MAXIMUM_BEARER_TOKEN_LENGTH, readBearerToken } from '../../../lambdas/core/limits.js';
import { silentLogger } from '../../../lambdas/core/ports.js';
import {
  createRunEventsFunctionUrlHandler,
  refuseWithoutBearerToken,
} from '../../../lambdas/handlers/http/run-events-function-url.js';

const JWT_SHAPED = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJlZGl0b3IifQ.c2lnbmF0dXJl';

function eventWith(authorization?: string): LambdaFunctionURLEvent {
  return {
    rawPath: '/runs/r1/events',
    headers: authorization === undefined ? {} : { authorization },
    requestContext: { http: { method: 'GET' } },
  } as unknown as LambdaFunctionURLEvent;
}

/** A response stream and the prelude and body written to it. */
function capture() {
  const chunks: Buffer[] = [];
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  let prelude: { statusCode: number; headers: Record<string, string> } | undefined;
  const startResponse = (
    target: Writable,
    given: { statusCode: number; headers: Record<string, string> },
  ) => {
    prelude = given;
    return target;
  };
  return {
    stream,
    startResponse,
    result: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return { prelude, body: Buffer.concat(chunks).toString('utf8') };
    },
  };
}

describe('the events function URL refuses requests without a bearer token early', () => {
  it.each([
    ['no header', undefined],
    ['another scheme', 'Basic ZWRpdG9yOnB3'],
    ['a bearer that is not a JWT', 'Bearer not-a-token'],
    ['an empty signature', 'Bearer aaa.bbb.'],
    ['an oversized token', `Bearer ${'a'.repeat(MAXIMUM_BEARER_TOKEN_LENGTH)}.b.c`],
  ])('answers 401 to %s without verifying anything', async (_case, authorization) => {
    // Prepare
    const response = capture();

    // Act
    const refused = refuseWithoutBearerToken(
      eventWith(authorization),
      response.stream,
      response.startResponse,
    );

    // Assess
    expect(refused).toBe(true);
    const { prelude, body } = await response.result();
    expect(prelude?.statusCode).toBe(401);
    expect(prelude?.headers['www-authenticate']).toBe('Bearer');
    expect(JSON.parse(body)).toEqual({
      error: { code: 'unauthenticated', message: 'The bearer token is missing or invalid.' },
    });
  });

  it('lets a JWT-shaped bearer token through to verification', () => {
    // Prepare
    const response = capture();

    // Act
    const refused = refuseWithoutBearerToken(
      eventWith(`Bearer ${JWT_SHAPED}`),
      response.stream,
      response.startResponse,
    );

    // Assess
    expect(refused).toBe(false);
    expect(readBearerToken(`bearer  ${JWT_SHAPED}`)).toBe(JWT_SHAPED);
  });

  it('never calls the verifier for a token that cannot be a JWT', async () => {
    // Prepare
    const verified: string[] = [];
    const response = capture();
    const handler = createRunEventsFunctionUrlHandler({
      verify: async (token) => {
        verified.push(token);
        return undefined;
      },
      route: async () => {
        throw new Error('the route must not run');
      },
      logger: silentLogger,
      startResponse: response.startResponse,
    });

    // Act
    await handler(eventWith('Bearer garbage'), response.stream);

    // Assess
    expect(verified).toEqual([]);
    expect((await response.result()).prelude?.statusCode).toBe(401);
  });
});

describe('the events function URL selects its route from the manifest, as API Gateway would', () => {
  it.each([
    ['a path the manifest does not list', 'GET', '/runs/r1/stream', 404, 'not-found'],
    ['another method on the events path', 'POST', '/runs/r1/events', 405, 'method-not-allowed'],
    ['a path that does not decode', 'GET', '/runs/%E0%A4%A/events', 400, 'bad-request'],
  ])('answers %s with %i before verifying a token', async (_case, method, rawPath, status, code) => {
    // Prepare
    const verified: string[] = [];
    const response = capture();
    const handle = createRunEventsFunctionUrlHandler({
      verify: async (token) => {
        verified.push(token);
        return { sub: 'editor' };
      },
      route: async () => {
        throw new Error('the route must not run');
      },
      logger: silentLogger,
      startResponse: response.startResponse,
    });

    // Act
    await handle(
      {
        rawPath,
        headers: { authorization: `Bearer ${JWT_SHAPED}` },
        requestContext: { http: { method } },
      } as unknown as LambdaFunctionURLEvent,
      response.stream,
    );

    // Assess
    const { prelude, body } = await response.result();
    expect(prelude?.statusCode).toBe(status);
    expect(JSON.parse(body)).toMatchObject({ error: { code } });
    expect(verified).toEqual([]);
  });

  it('hands the route the manifest route key, the decoded id and the claims as the JWT authorizer would', async () => {
    // Prepare
    const seen: unknown[] = [];
    const handle = createRunEventsFunctionUrlHandler({
      verify: async () => ({ sub: 'editor', groups: ['a', 'b'] }),
      route: async (event, stream) => {
        seen.push(event);
        stream.end();
      },
      logger: silentLogger,
      startResponse: (target) => target,
    });

    // Act
    await handle(
      {
        rawPath: '/runs/run%201/events',
        headers: { authorization: `Bearer ${JWT_SHAPED}` },
        requestContext: { http: { method: 'GET' }, requestId: 'request-1' },
      } as unknown as LambdaFunctionURLEvent,
      capture().stream,
    );

    // Assess
    expect(seen[0]).toMatchObject({
      routeKey: 'GET /runs/{id}/events',
      pathParameters: { id: 'run 1' },
      requestContext: {
        requestId: 'request-1',
        authorizer: { jwt: { claims: { sub: 'editor', groups: '[a b]' }, scopes: [] } },
      },
    });
  });
});
