import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../lambdas/core/ports.js';
import { type LocalHttpEvent, LocalHttpServer } from '../../lambdas/local/local-http-server.js';
import { LocalJwtIssuer } from '../../lambdas/local/local-jwt-issuer.js';

// What the local HTTP server answers and how it logs at its edges (issue #30): pages of other
// sites and rebound host names, and clients that hang up.

let keysDirectory: string;
let issuer: LocalJwtIssuer;
let server: LocalHttpServer;
let baseUrl: string;
const received: LocalHttpEvent[] = [];
const lines: Array<{ level: string; message: string }> = [];
const recordingLogger: Logger = {
  debug() {},
  info: (message) => lines.push({ level: 'info', message }),
  warn: (message) => lines.push({ level: 'warn', message }),
  error: (message) => lines.push({ level: 'error', message }),
};

/** One raw HTTP/1.1 request with exactly these headers (fetch would set Host and Origin itself). */
function sendRaw(
  url: string,
  headers: Record<string, string>,
  method = 'GET',
): Promise<{ status?: number; text: string }> {
  return new Promise((resolve, reject) => {
    const client = request(url, { method, headers, setHost: false }, (response) => {
      let text = '';
      response.on('data', (data) => {
        text += data;
      });
      response.on('end', () => resolve({ status: response.statusCode, text }));
    });
    client.on('error', reject);
    client.end();
  });
}

beforeAll(async () => {
  keysDirectory = await mkdtemp(path.join(tmpdir(), 'countersign-http-edges-'));
  issuer = await LocalJwtIssuer.open({ keysDirectory });
  const echo = async (event: LocalHttpEvent) => {
    received.push(event);
    return { statusCode: 200, body: '{"ok":true}' };
  };
  server = new LocalHttpServer({
    port: 0,
    verifier: issuer,
    logger: recordingLogger,
    routes: [
      { method: 'GET', path: '/runs/{id}', authentication: 'jwt', handler: echo },
      { method: 'POST', path: '/open', authentication: 'none', handler: echo },
    ],
  });
  ({ url: baseUrl } = await server.start());
});

afterAll(async () => {
  await server.stop();
  await rm(keysDirectory, { recursive: true });
});

beforeEach(() => {
  received.length = 0;
  lines.length = 0;
});

describe('the local HTTP server at its edges', () => {
  it('refuses a request from a page of another site, or to a rebound host name, before routing', async () => {
    // Prepare
    const token = await issuer.issue({ sub: 'ana', name: 'Ana', groups: [] }, { expiresInSeconds: 600 });
    const { host, port } = new URL(baseUrl);
    const authorization = `Bearer ${token}`;

    // Act
    const crossSite = await sendRaw(
      `${baseUrl}/open`,
      { host, origin: 'https://attacker.example', authorization },
      'POST',
    );
    const nullOrigin = await sendRaw(`${baseUrl}/runs/run-1`, { host, origin: 'null', authorization });
    const rebound = await sendRaw(`${baseUrl}/runs/run-1`, {
      host: `attacker.example:${port}`,
      authorization,
    });
    const ownPage = await sendRaw(`${baseUrl}/runs/run-1`, { host, origin: baseUrl, authorization });
    const byName = await sendRaw(`${baseUrl}/runs/run-1`, { host: `localhost:${port}`, authorization });
    const script = await sendRaw(`${baseUrl}/runs/run-1`, { host, authorization });

    // Assess
    for (const refused of [crossSite, nullOrigin, rebound]) {
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.text)).toMatchObject({ error: { code: 'forbidden' } });
    }
    expect([ownPage.status, byName.status, script.status]).toEqual([200, 200, 200]);
    expect(received).toHaveLength(3);
  });

  it('logs a client that hangs up in the middle of its body at INFO, never ERROR', async () => {
    // Act
    await new Promise<void>((resolve) => {
      const client = request(`${baseUrl}/open`, { method: 'POST', headers: { 'content-length': '1000' } });
      client.on('error', () => resolve());
      client.write('{"partial":', () => setTimeout(() => client.destroy(), 20));
      client.on('close', () => resolve());
    });

    // Assess
    await expect.poll(() => lines.some((line) => line.message === 'http-client-gone')).toBe(true);
    expect(lines.find((line) => line.message === 'http-client-gone')?.level).toBe('info');
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(received).toHaveLength(0);
  });
});
