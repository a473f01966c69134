import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_TOOL_NAME_CHARACTERS,
  MAX_TURN_ARGUMENTS_DEPTH,
  MAX_TURN_CALLS,
} from '../../lambdas/core/runs/take-model-turn.js';
import { TEXTS } from '../../lambdas/core/texts.js';
import {
  removeTestData,
  startRunAndSettle,
  startTestRuntime,
  type TestRuntime,
} from '../support/local-runtime.js';
import {
  finalAnswerReply,
  type ScriptedOpenAiServer,
  type ScriptedReply,
  startScriptedOpenAiServer,
  toolCallReply,
} from '../support/scripted-openai-server.js';

/**
 * A model that misbehaves, served over the real OpenAI-compatible adapter: each run's input
 * names the scripted reply. The engine must answer with a run that continues or ends
 * `failed` with a readable reason, never a crash and never a lost run.
 */
/** One reply proposing `count` calls of `update_page_metadata`, each on its own page. */
const manyToolCalls = (count: number) =>
  JSON.stringify({
    choices: [
      {
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: null,
          tool_calls: Array.from({ length: count }, (_, index) => ({
            id: `call-${index}`,
            type: 'function',
            function: {
              name: 'update_page_metadata',
              arguments: JSON.stringify({ pageId: `p${index}`, title: 'x' }),
            },
          })),
        },
      },
    ],
  });
const SCRIPTS: Record<string, ScriptedReply[]> = {
  'unknown tool': [
    { status: 200, body: toolCallReply('delete_everything', '{}') },
    { status: 200, body: finalAnswerReply('I could not do that.') },
  ],
  'malformed arguments': [
    { status: 200, body: toolCallReply('get_page', '{"pageId": 12') },
    { status: 200, body: finalAnswerReply('The arguments were wrong.') },
  ],
  // A refusal another attempt cannot change (429 and 5xx are retried first: see the adapter's tests).
  'provider error': [{ status: 403, body: '{"error":{"message":"Access denied for user x@host"}}' }],
  'garbage reply': [{ status: 200, body: '<html>not json</html>' }],
  'too many calls': [{ status: 200, body: manyToolCalls(MAX_TURN_CALLS + 1) }],
  // Deeper than any JSON walk's stack (10,000 levels): a readable failure, not a stack overflow.
  'deep arguments': [
    {
      status: 200,
      body: toolCallReply('update_page_metadata', `{"pageId":${'['.repeat(10_000)}${']'.repeat(10_000)}}`),
    },
  ],
  'long tool name': [{ status: 200, body: toolCallReply('x'.repeat(300_000), '{}') }],
  'huge arguments': [
    {
      status: 200,
      body: toolCallReply(
        'update_page_metadata',
        JSON.stringify({ pageId: '12', description: 'x'.repeat(250_000) }),
      ),
    },
  ],
};

describe('a misbehaving model', () => {
  let runtime: TestRuntime;
  let provider: ScriptedOpenAiServer;

  beforeAll(async () => {
    provider = await startScriptedOpenAiServer(SCRIPTS);
    runtime = await startTestRuntime({ openAiCompatible: { baseUrl: provider.baseUrl, apiKey: 'test-key' } });
    const configuration = {
      configurationId: 'misbehaving',
      label: 'Misbehaving model',
      provider: 'openai-compatible' as const,
      model: 'test-model',
      allowedTools: ['get_page', 'update_page_metadata'],
    };
    const put = await runtime
      .client('admin')
      .putConfiguration({ path: { id: 'misbehaving' }, body: configuration });
    expect(put.status).toBe(200);
  });

  afterAll(async () => {
    await runtime.stop();
    await provider.close();
    await removeTestData(runtime);
  });

  it('answers a call to an unknown tool with an error result and lets the model finish', async () => {
    // Act
    const { view } = await startRunAndSettle(runtime, 'unknown tool', { configurationId: 'misbehaving' });

    // Assess
    expect(view.status).toBe('completed');
    const second = provider.requests.filter((entry) => entry.script === 'unknown tool')[1];
    expect(JSON.stringify(second?.body.messages)).toContain(
      'Error: tool \\"delete_everything\\" is not available to this run.',
    );
  });

  it('answers malformed arguments with an error result naming the problem', async () => {
    const { view } = await startRunAndSettle(runtime, 'malformed arguments', {
      configurationId: 'misbehaving',
    });
    expect(view.status).toBe('completed');
    const second = provider.requests.filter((entry) => entry.script === 'malformed arguments')[1];
    expect(JSON.stringify(second?.body.messages)).toContain('invalid arguments for tool');
  });

  it('ends the run as failed with a readable reason when the provider errors, without its text', async () => {
    const { view } = await startRunAndSettle(runtime, 'provider error', { configurationId: 'misbehaving' });
    expect(view.status).toBe('failed');
    expect(view.failureReason).toMatch(/model/i);
    expect(view.failureReason).not.toContain('Access denied');
    expect(runtime.logLines.join('\n')).not.toContain('Access denied');
  });

  it('fails a run whose proposed arguments are too large for an approval card, writing nothing', async () => {
    const before = await runtime.dependencies.pages.getPage('12');
    const { view } = await startRunAndSettle(runtime, 'huge arguments', { configurationId: 'misbehaving' });
    expect(view.status).toBe('failed');
    expect(view.failureReason).toMatch(/exceed 200 KB/);
    expect(await runtime.dependencies.pages.getPage('12')).toEqual(before);
  });

  it('fails a run whose turn proposes more calls than one approval card shows, writing nothing', async () => {
    const { view } = await startRunAndSettle(runtime, 'too many calls', { configurationId: 'misbehaving' });
    expect(view.status).toBe('failed');
    expect(view.failureReason).toBe(
      `The model proposed more than ${MAX_TURN_CALLS} tool calls in one turn, more than an approval card can show.`,
    );
    expect(await runtime.dependencies.runs.getCard(view.runId)).toBeUndefined();
  });

  it.each([
    ['deep arguments', TEXTS.callsTooDeep(MAX_TURN_ARGUMENTS_DEPTH)],
    ['long tool name', TEXTS.callNameUnusable(MAX_TOOL_NAME_CHARACTERS)],
  ])('fails a run whose turn proposes %s with a readable reason, writing nothing', async (script, reason) => {
    // Issue #20 item 4: either reached the pause and could not be stored, with no reason a person could read.
    const { view } = await startRunAndSettle(runtime, script, { configurationId: 'misbehaving' });
    expect(view.status).toBe('failed');
    expect(view.failureReason).toBe(reason);
    expect(await runtime.dependencies.runs.getCard(view.runId)).toBeUndefined();
  });

  it('ends the run as failed with a readable reason when the reply is garbage', async () => {
    const { view } = await startRunAndSettle(runtime, 'garbage reply', { configurationId: 'misbehaving' });
    expect(view.status).toBe('failed');
    expect(view.failureReason).toMatch(/model/i);
  });
});
