import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../lambdas/core/ports.js';
import {
  type LocalHttpEvent,
  type LocalHttpResult,
  LocalHttpServer,
  type LocalRoute,
  UNAUTHENTICATED_MESSAGE,
} from '../../lambdas/local/local-http-server.js';
import {
  LOCAL_JWT_AUDIENCE,
  LOCAL_JWT_ISSUER,
  LOCAL_JWT_KEY_FILE_NAME,
  LocalJwtIssuer,
} from '../../lambdas/local/local-jwt-issuer.js';

let keysDirectory: string;
let issuer: LocalJwtIssuer;
let server: LocalHttpServer;
let baseUrl: string;
const received: LocalHttpEvent[] = [];
let streamClosed = false;

const echo = async (event: LocalHttpEvent): Promise<LocalHttpResult> => {
  received.push(event);
  return {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ok: true }),
  };
};

const errorLines: Array<{ message: string; fields?: Record<string, unknown> }> = [];
const capturingLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error(message, fields) {
    errorLines.push({ message, ...(fields ? { fields } : {}) });
  },
};

const routes: LocalRoute[] = [
  { method: 'GET', path: '/runs/{id}', authentication: 'jwt', handler: echo },
  { method: 'POST', path: '/runs/{id}/decision', authentication: 'jwt', handler: echo },
  { method: 'POST', path: '/open', routeKey: 'POST /open', authentication: 'none', handler: echo },
  {
    method: 'GET',
    path: '/explode',
    authentication: 'none',
    handler: async () => {
      throw new Error('database password is hunter2');
    },
  },
  {
    method: 'GET',
    path: '/runs/{id}/events',
    authentication: 'jwt',
    stream: true,
    handler: async (event, stream) => {
      received.push(event);
      stream.onClose(() => {
        streamClosed = true;
      });
      stream.setHeaders(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      stream.write('event: turn\ndata: {"turn":1}\n\n');
      await new Promise((resolve) => setTimeout(resolve, 20));
      stream.write('event: awaiting_approval\ndata: {"turn":2}\n\n');
      stream.end();
    },
  },
];

async function issueToken(): Promise<string> {
  return issuer.issue(
    { sub: 'ana', name: 'Ana', groups: ['approvers', 'reviewers'] },
    { expiresInSeconds: 600 },
  );
}

async function signWithStoredKey(build: (jwt: SignJWT) => SignJWT): Promise<string> {
  const jwk = JSON.parse(await readFile(path.join(keysDirectory, LOCAL_JWT_KEY_FILE_NAME), 'utf8'));
  return build(new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setSubject('ana')).sign(
    await importJWK(jwk, 'ES256'),
  );
}

beforeAll(async () => {
  keysDirectory = await mkdtemp(path.join(tmpdir(), 'countersign-http-'));
  issuer = await LocalJwtIssuer.open({ keysDirectory });
  server = new LocalHttpServer({ port: 0, routes, verifier: issuer, logger: capturingLogger });
  ({ url: baseUrl } = await server.start());
});

afterAll(async () => {
  await server.stop();
  await rm(keysDirectory, { recursive: true });
});

beforeEach(() => {
  received.length = 0;
  streamClosed = false;
});

describe('LocalHttpServer', () => {
  it('listens on 127.0.0.1 only', () => {
    // Assess
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('hands a jwt route an API Gateway payload v2 event', async () => {
    // Prepare
    const token = await issueToken();

    // Act
    const response = await fetch(`${baseUrl}/runs/run%201?limit=5&tag=a&tag=b`, {
      headers: { Authorization: `Bearer ${token}`, 'X-Custom-Header': 'Value' },
    });

    // Assess
    expect(response.status).toBe(200);
    expect(received).toHaveLength(1);
    const event = received[0] as LocalHttpEvent;
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'GET /runs/{id}',
      rawPath: '/runs/run%201',
      rawQueryString: 'limit=5&tag=a&tag=b',
      queryStringParameters: { limit: '5', tag: 'a,b' },
      pathParameters: { id: 'run 1' },
      isBase64Encoded: false,
    });
    expect(event.body).toBeUndefined();
    expect(event.headers['x-custom-header']).toBe('Value');
    expect(event.headers.authorization).toBe(`Bearer ${token}`);
    expect(event.requestContext).toMatchObject({
      routeKey: 'GET /runs/{id}',
      stage: '$default',
      http: { method: 'GET', path: '/runs/run%201', sourceIp: '127.0.0.1', protocol: 'HTTP/1.1' },
      authorizer: {
        jwt: {
          claims: {
            sub: 'ana',
            name: 'Ana',
            iss: LOCAL_JWT_ISSUER,
            aud: LOCAL_JWT_AUDIENCE,
            'cognito:groups': '[approvers reviewers]',
          },
          scopes: [],
        },
      },
    });
    expect(event.requestContext.requestId).toBe(response.headers.get('apigw-requestid'));
    expect(Math.abs(event.requestContext.timeEpoch - Date.now())).toBeLessThan(10_000);
    expect(event.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
  });

  it('passes a POST body as a string, and gives a route without authentication no authorizer', async () => {
    // Prepare
    const body = JSON.stringify({ digest: 'abc', decision: 'approve' });

    // Act
    const response = await fetch(`${baseUrl}/open`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });

    // Assess
    expect(response.status).toBe(200);
    expect(received[0]?.body).toBe(body);
    expect(received[0]?.routeKey).toBe('POST /open');
    expect(received[0]?.requestContext).not.toHaveProperty('authorizer');
  });

  describe('answers 401 like the JWT authorizer, naming no token', () => {
    const variants: Array<[string, () => Promise<Record<string, string>>]> = [
      ['no Authorization header', async () => ({})],
      ['a Basic scheme', async () => ({ Authorization: 'Basic YW5hOnNlY3JldA==' })],
      [
        'alg none',
        async () => {
          const [, payload] = (await issueToken()).split('.');
          const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
          return { Authorization: `Bearer ${header}.${payload}.` };
        },
      ],
      [
        'an expired token',
        async () => {
          const hourAgo = new Date(Date.now() - 3_600_000);
          const pastIssuer = await LocalJwtIssuer.open({ keysDirectory, clock: { now: () => hourAgo } });
          const token = await pastIssuer.issue(
            { sub: 'ana', name: 'Ana', groups: [] },
            { expiresInSeconds: 60 },
          );
          return { Authorization: `Bearer ${token}` };
        },
      ],
      [
        'a wrong audience',
        async () => {
          const token = await signWithStoredKey((jwt) =>
            jwt.setIssuer(LOCAL_JWT_ISSUER).setAudience('other-api').setExpirationTime('5m'),
          );
          return { Authorization: `Bearer ${token}` };
        },
      ],
      [
        'a forged signature',
        async () => {
          const [header, payload, signature] = (await issueToken()).split('.');
          const claims = JSON.parse(Buffer.from(String(payload), 'base64url').toString('utf8'));
          const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'admin' })).toString('base64url');
          return { Authorization: `Bearer ${header}.${forged}.${signature}` };
        },
      ],
    ];

    it.each(variants)('%s', async (_name, buildHeaders) => {
      // Prepare
      const headers = await buildHeaders();

      // Act
      const response = await fetch(`${baseUrl}/runs/run-1`, { headers });
      const text = await response.text();

      // Assess
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(JSON.parse(text)).toEqual({
        error: { code: 'unauthenticated', message: UNAUTHENTICATED_MESSAGE },
      });
      const credential = headers.Authorization?.split(' ')[1];
      if (credential) expect(text).not.toContain(credential);
      expect(received).toHaveLength(0);
    });
  });

  it('refuses a body above 1 MiB with 413 before the handler, and accepts exactly 1 MiB', async () => {
    // Prepare
    const token = await issueToken();
    const headers = { Authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    // Act
    const tooLarge = await fetch(`${baseUrl}/runs/run-1/decision`, {
      method: 'POST',
      headers,
      body: 'x'.repeat(1024 * 1024 + 1),
    });
    const tooLargeBody = await tooLarge.json();
    const handlerCallsAfterRefusal = received.length;
    const atLimit = await fetch(`${baseUrl}/runs/run-1/decision`, {
      method: 'POST',
      headers,
      body: 'x'.repeat(1024 * 1024),
    });

    // Assess
    expect(tooLarge.status).toBe(413);
    expect(tooLargeBody).toEqual({ error: { code: 'payload-too-large', message: expect.any(String) } });
    expect(handlerCallsAfterRefusal).toBe(0);
    expect(atLimit.status).toBe(200);
    expect(received[0]?.body).toHaveLength(1024 * 1024);
  });

  it('refuses a chunked body that grows past 1 MiB without a Content-Length', async () => {
    // Prepare
    const chunk = Buffer.alloc(64 * 1024, 120);

    // Act
    const outcome = await new Promise<{ status?: number; text: string }>((resolve, reject) => {
      const client = request(`${baseUrl}/open`, { method: 'POST' }, (response) => {
        let text = '';
        response.on('data', (data) => {
          text += data;
        });
        response.on('end', () => resolve({ status: response.statusCode, text }));
      });
      client.on('error', reject);
      let chunksSent = 0;
      const pump = (): void => {
        while (chunksSent < 32) {
          chunksSent += 1;
          if (!client.write(chunk)) {
            client.once('drain', pump);
            return;
          }
        }
        client.end();
      };
      pump();
    });

    // Assess
    expect(outcome.status).toBe(413);
    expect(JSON.parse(outcome.text)).toMatchObject({ error: { code: 'payload-too-large' } });
    expect(received).toHaveLength(0);
  });

  it('answers 404 for an unknown route and 405 for a known path with another method', async () => {
    // Act
    const unknown = await fetch(`${baseUrl}/nothing/here`);
    const wrongMethod = await fetch(`${baseUrl}/runs/run-1`, { method: 'DELETE' });

    // Assess
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: { code: 'not-found', message: expect.any(String) } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    expect(await wrongMethod.json()).toEqual({
      error: { code: 'method-not-allowed', message: expect.any(String) },
    });
  });

  it('turns a throwing handler into a 500 that says nothing, and keeps serving', async () => {
    // Act
    const failed = await fetch(`${baseUrl}/explode`);
    const failedText = await failed.text();
    const next = await fetch(`${baseUrl}/open`, { method: 'POST', body: '{}' });

    // Assess
    expect(failed.status).toBe(500);
    expect(JSON.parse(failedText)).toEqual({ error: { code: 'internal', message: 'Internal error.' } });
    expect(failedText).not.toContain('hunter2');
    expect(next.status).toBe(200);
    // One ERROR line with the request id the client saw, and nothing of the message.
    const lines = errorLines.filter((line) => line.fields?.routeKey === 'GET /explode');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.fields?.requestId).toBe(failed.headers.get('apigw-requestid'));
    expect(JSON.stringify(errorLines)).not.toContain('hunter2');
  });

  it('streams server-sent events from a streaming route', async () => {
    // Prepare
    const token = await issueToken();

    // Act
    const response = await fetch(`${baseUrl}/runs/run-1/events`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const text = await response.text();

    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = text
      .split('\n\n')
      .filter((block) => block.length > 0)
      .map((block) => Object.fromEntries(block.split('\n').map((line) => line.split(': ', 2))));
    expect(events).toEqual([
      { event: 'turn', data: '{"turn":1}' },
      { event: 'awaiting_approval', data: '{"turn":2}' },
    ]);
    expect(received[0]?.routeKey).toBe('GET /runs/{id}/events');
    expect(received[0]?.pathParameters).toEqual({ id: 'run-1' });
    await expect.poll(() => streamClosed).toBe(true);
  });

  it('closes open event streams on stop()', async () => {
    // Prepare
    let closedByStop = false;
    const streamingServer = new LocalHttpServer({
      port: 0,
      verifier: issuer,
      routes: [
        {
          method: 'GET',
          path: '/events',
          authentication: 'none',
          stream: true,
          handler: async (_event, stream) => {
            stream.write('event: turn\ndata: {}\n\n');
            await new Promise<void>((resolve) => stream.onClose(resolve));
            closedByStop = true;
          },
        },
      ],
    });
    const { url } = await streamingServer.start();
    const response = await fetch(`${url}/events`);
    const reader = response.body?.getReader();
    const firstChunk = await reader?.read();

    // Act
    await streamingServer.stop();

    // Assess
    expect(new TextDecoder().decode(firstChunk?.value)).toContain('event: turn');
    await expect.poll(() => closedByStop).toBe(true);
    await expect(reader?.read()).rejects.toThrow();
  });
});
