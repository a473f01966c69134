import { describe, expect, it } from 'vitest';
import { bodyOf, refusalOf } from '../support/api-answers.js';
import { useTestRuntime } from '../support/local-runtime.js';

describe('bad input to the run API', () => {
  const runtime = useTestRuntime();

  const cases: Array<{ name: string; body: unknown; status: number; message: RegExp }> = [
    { name: 'malformed JSON', body: '{"taskId": ', status: 400, message: /^body: not valid JSON/ },
    { name: 'a missing input', body: { taskId: 'page-metadata' }, status: 400, message: /^body\.input: / },
    {
      name: 'a mistyped input',
      body: { taskId: 'page-metadata', input: 42 },
      status: 400,
      message: /^body\.input: /,
    },
    {
      name: 'both task and configuration',
      body: { taskId: 'page-metadata', configurationId: 'demo-scripted', input: 'x' },
      status: 400,
      message: /exactly one/,
    },
    {
      name: 'an unknown field',
      body: { taskId: 'page-metadata', input: 'x', owner: 'admin' },
      status: 400,
      message: /^body.owner: unknown field/,
    },
    {
      name: 'an unknown task',
      body: { taskId: 'no-such-task', input: 'x' },
      status: 400,
      message: /^taskId: no task "no-such-task"/,
    },
    {
      name: 'an unknown configuration',
      body: { configurationId: 'nope', input: 'x' },
      status: 400,
      message: /^configurationId: /,
    },
    { name: 'a JSON array', body: '[]', status: 400, message: /^body/ },
  ];

  for (const testCase of cases) {
    it(`answers ${testCase.name} with ${testCase.status} naming the problem`, async () => {
      // Act (raw: most of these bodies are malformed on purpose)
      const response = await runtime.sendRaw('POST', '/runs', { as: 'editor', body: testCase.body });

      // Assess
      expect(response.status).toBe(testCase.status);
      expect(response.json.error.message).toMatch(testCase.message);
    });
  }

  it('refuses a body over 64 KB with 413 and starts nothing', async () => {
    const response = await runtime
      .client('editor')
      .startRun({ body: { taskId: 'page-metadata', input: 'x'.repeat(70_000) } });
    expect(response.status).toBe(413);
    expect(refusalOf(response).error.code).toBe('payload-too-large');
    expect(runtime.calls.snapshot()['SFN:StartExecution'] ?? 0).toBe(0);
  });

  it("answers an unknown run, a malformed run id and another user's run with the same 404", async () => {
    const unknown = await runtime
      .client('editor')
      .getRun({ path: { id: '00000000-0000-0000-0000-000000000000' } });
    // raw: an encoded path traversal as the run id, sent as written
    const malformed = await runtime.sendRaw('GET', '/runs/..%2F..', { as: 'editor' });
    expect(unknown.status).toBe(404);
    expect(malformed.status).toBe(404);
    expect(malformed.json).toEqual(unknown.body);

    const started = await runtime
      .client('editor')
      .startRun({ body: { taskId: 'page-metadata', input: 'List the pages' } });
    const someoneElses = await runtime.client('approver').getRun({ path: { id: bodyOf(started).runId } });
    expect(someoneElses.status).toBe(404);
    expect(someoneElses.body).toEqual(unknown.body);
  });

  it('refuses a run to a user without the agent_run grant', async () => {
    const response = await runtime
      .client('approver')
      .startRun({ body: { taskId: 'page-metadata', input: 'x' } });
    expect(response.status).toBe(403);
    expect(refusalOf(response).error.message).toContain('agent_run');
  });

  it('refuses a request without a bearer token with 401', async () => {
    const response = await runtime.client().startRun({ body: { taskId: 'page-metadata', input: 'x' } });
    expect(response.status).toBe(401);
  });
});
