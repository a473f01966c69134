import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTestData, startTestRuntime } from '../support/local-runtime.js';

/** Listening TCP servers of this process, as Node counts its active resources. */
function listeningServers(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'TCPServerWrap').length;
}

/** A POST as a page of another site would send it: its `Origin`, the runtime's own `Host`. */
function postFromAnotherSite(url: string, token: string): Promise<{ status?: number; text: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL('/runs', url);
    const client = request(
      target,
      {
        method: 'POST',
        headers: {
          host: target.host,
          origin: 'https://attacker.example',
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
        },
        setHost: false,
      },
      (response) => {
        let text = '';
        response.on('data', (chunk) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode, text }));
      },
    );
    client.on('error', reject);
    client.end(JSON.stringify({ taskId: 'page-metadata', input: "Set the title of page 12 to 'Pwned'" }));
  });
}

describe('what `npm start` listens on', () => {
  let before: number;
  let runtime: Awaited<ReturnType<typeof startTestRuntime>>;

  beforeAll(async () => {
    before = listeningServers();
    runtime = await startTestRuntime();
  });

  afterAll(async () => {
    await runtime.stop();
    await removeTestData(runtime);
  });

  it('opens three sockets, the HTTP server, the sign-in provider and the agents’ token endpoint on 127.0.0.1: the store and the keyring have none', () => {
    // Assess
    expect(listeningServers() - before).toBe(3);
    expect(new URL(runtime.url).hostname).toBe('127.0.0.1');
    expect(new URL(runtime.issuerUrl).hostname).toBe('127.0.0.1');
    expect(new URL(runtime.machine.tokenUrl).hostname).toBe('127.0.0.1');
  });

  it("refuses a page of another site, even one holding a user's token, before any run starts", async () => {
    // Prepare
    runtime.calls.reset();

    // Act
    const answer = await postFromAnotherSite(runtime.url, runtime.tokens.editor ?? '');

    // Assess
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'forbidden' } });
    expect(runtime.calls.snapshot()).toEqual({});
  });
});
