import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, routeKeyOf } from '../../lambdas/contract/routes.js';
import type { ApiHandlers } from '../../lambdas/handlers/api-handlers.js';
import { LocalHttpServer } from '../../lambdas/local/local-http-server.js';
import { LocalJwtIssuer } from '../../lambdas/local/local-jwt-issuer.js';
import { DEMO_MACHINE_CLIENT_ID, LocalMachineClients } from '../../lambdas/local/local-machine-clients.js';
import { localRoutesOf } from '../../lambdas/local/local-routes.js';

let keysDirectory: string;
let server: LocalHttpServer;
let baseUrl: string;
let token: string;
let machineToken: string;

/** Each function answers with its own name and the route key it was handed. */
function namedHandler(name: string) {
  return async (event: { routeKey: string; requestContext: { authorizer?: unknown } }) => ({
    statusCode: 200,
    body: JSON.stringify({
      function: name,
      routeKey: event.routeKey,
      authorized: !!event.requestContext.authorizer,
    }),
  });
}

const handlers = {
  'api-runs': namedHandler('api-runs'),
  'api-inbox': namedHandler('api-inbox'),
  'api-decision': namedHandler('api-decision'),
  'api-admin': namedHandler('api-admin'),
  'api-generate': namedHandler('api-generate'),
  'api-external': namedHandler('api-external'),
  'api-run-events': async (
    event: { requestContext: { routeKey: string } },
    stream: { write(chunk: string): void; end(): void },
  ) => {
    stream.write(
      `data: ${JSON.stringify({ function: 'api-run-events', routeKey: event.requestContext.routeKey })}\n\n`,
    );
    stream.end();
  },
} as unknown as ApiHandlers;

/** A concrete path of a manifest path (every parameter filled in). */
const concrete = (template: string) => template.replace(/\{\w+\}/g, 'x1');

beforeAll(async () => {
  keysDirectory = await mkdtemp(path.join(tmpdir(), 'countersign-routes-'));
  const issuer = await LocalJwtIssuer.open({ keysDirectory });
  token = await issuer.issue({ sub: 'ana', name: 'Ana', groups: [] }, { expiresInSeconds: 600 });
  const machineClients = await LocalMachineClients.open({ keysDirectory, issuer });
  machineToken = await machineClients.issueToken(DEMO_MACHINE_CLIENT_ID, 600);
  server = new LocalHttpServer({
    port: 0,
    routes: localRoutesOf(handlers, { 'slack-interactions': namedHandler('slack-interactions') as never }),
    verifier: issuer,
    machineVerifier: machineClients,
  });
  ({ url: baseUrl } = await server.start());
});

afterAll(async () => {
  await server.stop();
  await rm(keysDirectory, { recursive: true });
});

describe('the local server serves exactly the route manifest', () => {
  it.each(ROUTES.map((route) => [routeKeyOf(route), route]))(
    '%s reaches its function',
    async (_key, route) => {
      // Act
      const response = await fetch(`${baseUrl}${concrete(route.path)}`, {
        method: route.method,
        headers: { authorization: `Bearer ${route.auth === 'machine' ? machineToken : token}` },
      });
      const text = await response.text();

      // Assess
      expect(response.status).toBe(200);
      const answer = JSON.parse(text.replace(/^data: /, ''));
      expect(answer).toMatchObject({ function: route.function, routeKey: routeKeyOf(route) });
    },
  );

  it.each(ROUTES.map((route) => [routeKeyOf(route), route]))(
    '%s is authenticated as the manifest says',
    async (_key, route) => {
      // Act
      const response = await fetch(`${baseUrl}${concrete(route.path)}`, { method: route.method });

      // Assess
      // Slack's route takes no token: its handler checks Slack's signature (a stand-in here).
      expect(response.status).toBe(route.auth === 'none' || route.auth === 'slack-signature' ? 200 : 401);
    },
  );

  it.each(
    ROUTES.filter((route) => route.auth === 'jwt' || route.auth === 'machine').map(
      (route) => [routeKeyOf(route), route] as const,
    ),
  )(
    '%s refuses the token of the other kind (a person’s on a machine route, a machine’s elsewhere)',
    async (_key, route) => {
      // Act
      const response = await fetch(`${baseUrl}${concrete(route.path)}`, {
        method: route.method,
        headers: { authorization: `Bearer ${route.auth === 'machine' ? token : machineToken}` },
      });

      // Assess
      expect(response.status).toBe(401);
    },
  );

  it('serves a channel’s route only when its channel is on: otherwise it is a 404, as deployed', async () => {
    // Prepare
    const issuer = await LocalJwtIssuer.open({ keysDirectory });
    const withoutSlack = new LocalHttpServer({ port: 0, routes: localRoutesOf(handlers), verifier: issuer });
    const { url } = await withoutSlack.start();

    // Act
    const response = await fetch(`${url}/integrations/slack/interactions`, { method: 'POST' });
    await withoutSlack.stop();

    // Assess
    expect(response.status).toBe(404);
  });

  it('answers a manifest path with a method it does not list 405, naming the methods it does', async () => {
    // Act: pages have no DELETE in the manifest; the greedy admin route that once took it is gone.
    const response = await fetch(`${baseUrl}/admin/pages/12`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });

    // Assess
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, PUT');
  });
});
