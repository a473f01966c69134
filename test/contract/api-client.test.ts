import { describe, expect, it } from 'vitest';
import { createApiClient, fillPath } from '../../lambdas/contract/api-client.js';
import { ROUTES } from '../../lambdas/contract/routes.js';

/** A fetch that records what it was asked and answers one JSON body. */
function recordingFetch(status: number, body: unknown) {
  const requests: Array<{ url: string; method: string; headers: Record<string, string>; body?: string }> = [];
  const fetchStub: typeof fetch = async (input, init) => {
    requests.push({
      url: String(input),
      method: init?.method ?? 'GET',
      headers: init?.headers as Record<string, string>,
      ...(typeof init?.body === 'string' ? { body: init.body } : {}),
    });
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  };
  return { requests, fetchStub };
}

describe('the typed API client', () => {
  it('has one method per operationId of the manifest', () => {
    // Act
    const client = createApiClient({ baseUrl: 'http://api' });

    // Assess
    for (const route of ROUTES) expect(typeof client[route.operationId], route.operationId).toBe('function');
  });

  it('sends the manifest method and path, the encoded path parameters, the query and the JSON body', async () => {
    // Prepare
    const { requests, fetchStub } = recordingFetch(202, { kind: 'approval-recorded' });
    const client = createApiClient({ baseUrl: 'http://api', token: 'token-1', fetch: fetchStub });

    // Act
    const decided = await client.decideRun({
      path: { id: 'run 1/x' },
      body: { digest: 'd', decision: 'approve' },
    });
    await client.listInbox({ query: { limit: 5, cursor: 'a&b' } });

    // Assess
    expect(decided).toMatchObject({ status: 202, ok: true, body: { kind: 'approval-recorded' } });
    expect(requests[0]).toMatchObject({
      url: 'http://api/runs/run%201%2Fx/decision',
      method: 'POST',
      headers: { authorization: 'Bearer token-1', 'content-type': 'application/json' },
      body: '{"digest":"d","decision":"approve"}',
    });
    expect(requests[1]).toMatchObject({ url: 'http://api/inbox?limit=5&cursor=a%26b', method: 'GET' });
  });

  it('sends no token when it has none, and reads a refusal as the error body', async () => {
    // Prepare
    const { requests, fetchStub } = recordingFetch(401, {
      error: { code: 'unauthenticated', message: 'No.' },
    });

    // Act
    const refused = await createApiClient({ baseUrl: 'http://api', fetch: fetchStub }).listInbox();

    // Assess
    expect(requests[0]?.headers.authorization).toBeUndefined();
    expect(refused).toMatchObject({ status: 401, ok: false, body: { error: { code: 'unauthenticated' } } });
  });

  it('refuses to build a path without its parameter', () => {
    expect(() => fillPath('/runs/{id}/calls/{index}', { id: 'r' })).toThrow('needs the parameter "index"');
  });
});
