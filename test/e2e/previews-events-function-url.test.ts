import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, type Writable } from 'node:stream';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lambdas/core/ports.js';
import { createRunEventsFunctionUrlHandler } from '../../lambdas/handlers/http/run-events-function-url.js';
import { createOidcTokenVerifier } from '../../lambdas/handlers/http/verify-oidc-token.js';
import { createRunEventsRoute } from '../../lambdas/handlers/routes/events-routes.js';
import {
  removeTestData,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';
import { parseServerSentEvents } from '../support/server-sent-events.js';

const AUDIENCE = 'countersign-inbox-client';

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** A stand-in identity provider on 127.0.0.1: OIDC discovery and a JWKS, as Cognito serves them. */
async function startIdentityProvider() {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'key-1', alg: 'RS256', use: 'sig' };
  let issuer = '';
  const server: Server = createServer((request, response) => {
    response.setHeader('content-type', 'application/json');
    if (request.url === '/pool/.well-known/openid-configuration') {
      response.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks.json` }));
    } else if (request.url === '/pool/jwks.json') {
      response.end(JSON.stringify({ keys: [jwk] }));
    } else {
      response.statusCode = 404;
      response.end('{}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pool`;
  const sign = (claims: Record<string, unknown>, options: { key?: SigningKey; audience?: string } = {}) => {
    const token = new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'key-1' })
      .setIssuer(issuer)
      .setIssuedAt()
      .setExpirationTime('10m');
    if (options.audience !== undefined) token.setAudience(options.audience);
    return token.sign(options.key ?? privateKey);
  };
  return { issuer, sign, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Invokes the handler as the Lambda runtime would, collecting the prelude and the streamed body. */
async function invoke(
  handler: ReturnType<typeof createRunEventsFunctionUrlHandler>,
  path: string,
  authorization?: string,
) {
  const chunks: Buffer[] = [];
  const responseStream = new PassThrough();
  responseStream.on('data', (chunk: Buffer) => chunks.push(chunk));
  const event = {
    rawPath: path,
    headers: authorization ? { authorization } : {},
    requestContext: { http: { method: 'GET' } },
  } as unknown as LambdaFunctionURLEvent;
  await handler(event, responseStream);
  await new Promise((resolve) => setImmediate(resolve));
  // startResponse (below) recorded the prelude the runtime sends before the body.
  return { ...preludes.get(responseStream), body: Buffer.concat(chunks).toString('utf8') };
}

const preludes = new WeakMap<Writable, { statusCode: number; headers: Record<string, string> }>();

describe('the deployed run events endpoint (function URL handler)', () => {
  let runtime: TestRuntime;
  let provider: Awaited<ReturnType<typeof startIdentityProvider>>;
  let handler: ReturnType<typeof createRunEventsFunctionUrlHandler>;
  let runId: string;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    provider = await startIdentityProvider();
    handler = createRunEventsFunctionUrlHandler({
      verify: createOidcTokenVerifier({ issuerUrl: provider.issuer, audience: [AUDIENCE] }),
      route: createRunEventsRoute(runtime.dependencies, { followMs: 0 }),
      logger: silentLogger,
      startResponse: (stream, prelude) => {
        preludes.set(stream, prelude);
        return stream;
      },
    });
    ({ runId } = await startRunAndSettle(runtime, "Set the description of page 12 to 'Streamed'"));
  });

  afterAll(async () => {
    await provider?.stop();
    await runtime?.stop();
    if (runtime) await removeTestData(runtime);
  });

  it('streams the run to its owner holding a token of the configured issuer and audience', async () => {
    // Prepare
    const token = await provider.sign({ sub: 'editor' }, { audience: AUDIENCE });

    // Act
    const response = await invoke(handler, `/runs/${runId}/events`, `Bearer ${token}`);

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['content-type']).toMatch(/^text\/event-stream/);
    const events = parseServerSentEvents(response.body);
    expect(events.map((event) => event.event)).toEqual(['turn', 'awaiting_approval', 'state']);
    expect(events[1]?.data.pendingTools[0].preview.status).toBe('shown');
  });

  it('accepts a Cognito access token that names the app client in client_id', async () => {
    const token = await provider.sign({ sub: 'editor', client_id: AUDIENCE, token_use: 'access' });
    const response = await invoke(handler, `/runs/${runId}/events`, `Bearer ${token}`);
    expect(response.statusCode).toBe(200);
  });

  it('refuses a missing, forged or wrong-audience token with 401, before reading the run', async () => {
    // Prepare
    const forger = await generateKeyPair('RS256');
    const forged = await provider.sign({ sub: 'editor' }, { audience: AUDIENCE, key: forger.privateKey });
    const wrongAudience = await provider.sign({ sub: 'editor' }, { audience: 'another-app' });
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(
      JSON.stringify({ sub: 'editor', iss: provider.issuer, aud: AUDIENCE }),
    ).toString('base64url')}.`;

    // Act
    const answers = await Promise.all([
      invoke(handler, `/runs/${runId}/events`),
      invoke(handler, `/runs/${runId}/events`, `Bearer ${forged}`),
      invoke(handler, `/runs/${runId}/events`, `Bearer ${wrongAudience}`),
      invoke(handler, `/runs/${runId}/events`, `Bearer ${unsigned}`),
    ]);

    // Assess
    for (const answer of answers) {
      expect(answer.statusCode).toBe(401);
      expect(JSON.parse(answer.body)).toEqual({
        error: { code: 'unauthenticated', message: 'The bearer token is missing or invalid.' },
      });
    }
  });

  it('answers another user with the same 404 as an unknown run, and an unknown path with 404', async () => {
    // Prepare
    const approverToken = await provider.sign({ sub: 'approver' }, { audience: AUDIENCE });

    // Act
    const notTheirs = await invoke(handler, `/runs/${runId}/events`, `Bearer ${approverToken}`);
    const unknownRun = await invoke(handler, '/runs/no-such-run/events', `Bearer ${approverToken}`);
    const unknownPath = await invoke(handler, `/runs/${runId}`, `Bearer ${approverToken}`);

    // Assess
    expect(notTheirs.statusCode).toBe(404);
    expect(notTheirs.body).toBe(unknownRun.body);
    expect(unknownPath.statusCode).toBe(404);
  });
});
