import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createStaticKeySource,
  OpenAiCompatibleModel,
  type OpenAiCompatibleModelOptions,
} from '../../../lambdas/adapters/models/openai-compatible-model.js';
import { CountersignError } from '../../../lambdas/core/errors.js';
import type { ModelRequest } from '../../../lambdas/core/model.js';
import { fixtureBodyText, loadModelFixture } from './model-fixtures.js';

interface ReceivedRequest {
  method: string | undefined;
  url: string | undefined;
  authorization: string | undefined;
  body: unknown;
}

// One server for the file; each test says which fixture it answers with ('hang' never answers).
let server: Server;
let baseUrl: string;
let answerWith: string | 'hang' = 'openai-compatible/chat-stop.json';
const received: ReceivedRequest[] = [];

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const body = await readBody(request);
    received.push({
      method: request.method,
      url: request.url,
      authorization: request.headers.authorization,
      body: JSON.parse(body),
    });
    if (answerWith === 'hang') return;
    const fixture = loadModelFixture(answerWith);
    response.writeHead(fixture.statusCode, fixture.headers);
    response.end(fixtureBodyText(fixture));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
});

afterEach(() => {
  received.length = 0;
  slept.length = 0;
  answerWith = 'openai-compatible/chat-stop.json';
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Waits the model asked for, on a clock that advances by them instead of real time. */
const slept: number[] = [];

function createModel(options: Partial<OpenAiCompatibleModelOptions> = {}) {
  let now = 0;
  return new OpenAiCompatibleModel({
    baseUrl,
    apiKey: createStaticKeySource('sk-test-key'),
    now: () => now,
    random: () => 0.5,
    sleep: async (milliseconds) => {
      slept.push(milliseconds);
      now += milliseconds;
    },
    ...options,
  });
}

const request: ModelRequest = {
  model: 'gpt-4o',
  system: 'You edit page metadata.',
  maxTokens: 512,
  temperature: 0.2,
  tools: [
    {
      name: 'update_page_metadata',
      description: 'Sets metadata.',
      inputSchema: { type: 'object', properties: { pageId: { type: 'string' } } },
    },
  ],
  messages: [
    { role: 'user', content: [{ type: 'text', text: "Set the description of page 12 to 'Spring sale'" }] },
    {
      role: 'assistant',
      content: [
        { type: 'tool_call', callId: 'call-1-0', name: 'update_page_metadata', arguments: { pageId: '12' } },
        { type: 'tool_call', callId: 'call-1-1', name: 'update_page_metadata', arguments: '{broken' },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          callId: 'call-1-0',
          content: 'Updated page 12 (en): description.',
          isError: false,
        },
        { type: 'tool_result', callId: 'call-1-1', content: 'The arguments are not valid.', isError: true },
        { type: 'text', text: 'Thanks.' },
      ],
    },
  ],
};

describe('OpenAiCompatibleModel', () => {
  it('posts a chat completion with the bearer key, function tools and tool messages in order', async () => {
    // Act
    await createModel().converse(request);

    // Assess
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      method: 'POST',
      url: '/v1/chat/completions',
      authorization: 'Bearer sk-test-key',
    });
    expect(received[0]?.body).toEqual({
      model: 'gpt-4o',
      max_tokens: 512,
      temperature: 0.2,
      tools: [
        {
          type: 'function',
          function: {
            name: 'update_page_metadata',
            description: 'Sets metadata.',
            parameters: { type: 'object', properties: { pageId: { type: 'string' } } },
          },
        },
      ],
      messages: [
        { role: 'system', content: 'You edit page metadata.' },
        { role: 'user', content: "Set the description of page 12 to 'Spring sale'" },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call-1-0',
              type: 'function',
              function: { name: 'update_page_metadata', arguments: '{"pageId":"12"}' },
            },
            {
              id: 'call-1-1',
              type: 'function',
              function: { name: 'update_page_metadata', arguments: '{broken' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call-1-0', content: 'Updated page 12 (en): description.' },
        { role: 'tool', tool_call_id: 'call-1-1', content: 'Error: The arguments are not valid.' },
        { role: 'user', content: 'Thanks.' },
      ],
    });
  });

  it('maps tool calls back with parsed arguments, empty arguments as an empty object, and usage', async () => {
    // Prepare
    answerWith = 'openai-compatible/chat-tool-calls.json';

    // Act
    const reply = await createModel().converse(request);

    // Assess
    expect(reply).toEqual({
      stopReason: 'tool_use',
      usage: { inputTokens: 402, outputTokens: 51 },
      attempts: { total: 1, throttled: 0 },
      content: [
        {
          type: 'tool_call',
          callId: 'call_Xb3kP9qLm2NvR8sT',
          name: 'update_page_metadata',
          arguments: { pageId: '12', description: 'Spring sale' },
        },
        { type: 'tool_call', callId: 'call_Yc4lQ0rMn3OwS9tU', name: 'list_pages', arguments: {} },
      ],
    });
  });

  it('passes unparsable arguments on as the raw string and treats the calls as tool use', async () => {
    // Prepare
    answerWith = 'openai-compatible/chat-unparsable-arguments.json';

    // Act
    const reply = await createModel().converse(request);

    // Assess
    expect(reply.stopReason).toBe('tool_use');
    expect(reply.content).toEqual([
      {
        type: 'tool_call',
        callId: 'call_0',
        name: 'update_page_metadata',
        arguments: "{pageId: 12, description: 'Spring sale'",
      },
    ]);
  });

  it.each([
    ['openai-compatible/chat-stop.json', 'end_turn'],
    ['openai-compatible/chat-length.json', 'max_tokens'],
  ])('maps the finish reason of %s to %s', async (fixture, stopReason) => {
    // Prepare
    answerWith = fixture;

    // Act
    const reply = await createModel().converse(request);

    // Assess
    expect(reply.stopReason).toBe(stopReason);
    expect(reply.content).toEqual([{ type: 'text', text: expect.any(String) }]);
  });

  it.each([
    // Backoff with jitter (random 0.5): 500 ms, 1 s, 2 s, then the fourth attempt fails too.
    [
      'openai-compatible/server-error.json',
      'The model provider failed to answer (HTTP 500); gave up after 4 attempts in 4 s.',
      { code: 'model-unavailable', transient: true, attempts: { total: 4, throttled: 0 } },
    ],
    // Retry-After: 20 s twice; a third wait would pass the 45 s bound.
    [
      'openai-compatible/rate-limited.json',
      'The model provider is throttling requests (HTTP 429); gave up after 3 attempts in 40 s.',
      { code: 'model-unavailable', transient: true, attempts: { total: 3, throttled: 3 } },
    ],
    [
      'openai-compatible/unauthorized.json',
      'The model provider refused the API key (HTTP 401).',
      { code: 'model-failed', transient: false, attempts: { total: 1, throttled: 0 } },
    ],
    [
      'openai-compatible/garbage.json',
      'The model provider returned a reply that could not be read.',
      { code: 'model-failed', transient: false },
    ],
    [
      'openai-compatible/wrong-shape.json',
      'The model provider returned a reply that could not be read.',
      { code: 'model-failed', transient: false },
    ],
  ])('turns %s into a failure without the provider text, transient or not', async (fixture, reason, kind) => {
    // Prepare
    answerWith = fixture;

    // Act
    const failure = await createModel()
      .converse(request)
      .catch((error: unknown) => error);

    // Assess
    expect(failure).toBeInstanceOf(CountersignError);
    expect(failure).toMatchObject({ ...kind, message: reason });
    expect((failure as Error).message).not.toMatch(/sk-|org-|10\.1\.2\.3/);
  });

  it('gives up after the timeout with a readable reason', async () => {
    // Prepare
    answerWith = 'hang';

    // Act
    const failure = await createModel({ timeoutMilliseconds: 200 })
      .converse(request)
      .catch((error: unknown) => error);

    // Assess
    expect(failure).toMatchObject({
      code: 'model-unavailable',
      transient: true,
      message: 'The model provider did not answer within 0.2 s.',
    });
  });

  it('reports an unreachable endpoint without the network error text', async () => {
    // Prepare: a port nothing listens on.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const model = createModel({ baseUrl: `http://127.0.0.1:${port}` });

    // Act
    const failure = await model.converse(request).catch((error: unknown) => error);

    // Assess
    expect(failure).toMatchObject({
      code: 'model-unavailable',
      transient: true,
      attempts: { total: 4, throttled: 0 },
      message: 'The model provider could not be reached; gave up after 4 attempts in 4 s.',
    });
  });

  it('reports a key source failure without its text and sends nothing', async () => {
    // Prepare
    const model = new OpenAiCompatibleModel({
      baseUrl,
      apiKey: async () => {
        throw new Error('AccessDenied for role arn:aws:iam::123456789012:role/x');
      },
    });

    // Act
    const failure = await model.converse(request).catch((error: unknown) => error);

    // Assess
    expect(failure).toMatchObject({
      code: 'model-failed',
      message: 'The model provider API key could not be read.',
    });
    expect(received).toHaveLength(0);
  });
});

describe('OpenAiCompatibleModel against a throttling provider', () => {
  // A local fake provider on 127.0.0.1 that answers from a queue; the last answer repeats.
  let provider: Server;
  let providerUrl: string;
  let answers: Array<{ status: number; headers?: Record<string, string>; fixture?: string }> = [];
  let requests = 0;

  beforeAll(async () => {
    provider = createServer(async (incoming, response) => {
      await readBody(incoming);
      requests += 1;
      const answer = answers.length > 1 ? answers.shift() : answers[0];
      if (answer?.fixture) {
        const fixture = loadModelFixture(answer.fixture);
        response.writeHead(fixture.statusCode, fixture.headers);
        response.end(fixtureBodyText(fixture));
        return;
      }
      response.writeHead(answer?.status ?? 500, { 'content-type': 'application/json', ...answer?.headers });
      response.end(JSON.stringify({ error: { message: 'Rate limit reached for org-SECRET42 in 10.1.2.3' } }));
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
  });

  afterEach(() => {
    requests = 0;
    slept.length = 0;
  });

  afterAll(async () => {
    provider.closeAllConnections();
    await new Promise<void>((resolve) => provider.close(() => resolve()));
  });

  it('answers 429 then 200: waits the Retry-After, retries once and returns the reply', async () => {
    // Prepare
    answers = [
      { status: 429, headers: { 'retry-after': '2' } },
      { status: 200, fixture: 'openai-compatible/chat-stop.json' },
    ];

    // Act
    const reply = await createModel({ baseUrl: providerUrl }).converse(request);

    // Assess
    expect(requests).toBe(2);
    expect(slept).toEqual([2000]);
    expect(reply.stopReason).toBe('end_turn');
  });

  it('answers 503 then 200 without Retry-After: backs off with jitter under the first ceiling', async () => {
    // Prepare
    answers = [{ status: 503 }, { status: 200, fixture: 'openai-compatible/chat-stop.json' }];

    // Act
    const reply = await createModel({ baseUrl: providerUrl, random: () => 0.25 }).converse(request);

    // Assess: full jitter, 0.25 of the first 1 s ceiling
    expect(requests).toBe(2);
    expect(slept).toEqual([250]);
    expect(reply.content.length).toBeGreaterThan(0);
  });

  it('answers 429 forever: gives up after the bounded attempts with a readable reason, no provider text', async () => {
    // Prepare
    answers = [{ status: 429 }];

    // Act
    const failure = await createModel({ baseUrl: providerUrl, random: () => 1 })
      .converse(request)
      .catch((error: unknown) => error);

    // Assess: 4 attempts, waits doubling 1 s, 2 s, 4 s
    expect(requests).toBe(4);
    expect(slept).toEqual([1000, 2000, 4000]);
    expect(failure).toBeInstanceOf(CountersignError);
    expect(failure).toMatchObject({
      code: 'model-unavailable',
      transient: true,
      attempts: { total: 4, throttled: 4 },
      message: 'The model provider is throttling requests (HTTP 429); gave up after 4 attempts in 7 s.',
    });
    expect((failure as Error).message).not.toMatch(/SECRET|org-|10\.1\.2\.3|Rate limit reached/);
  });

  it('gives up at once when the Retry-After asked for would pass the time bound', async () => {
    // Prepare
    answers = [{ status: 429, headers: { 'retry-after': '120' } }];

    // Act
    const failure = await createModel({ baseUrl: providerUrl })
      .converse(request)
      .catch((error: unknown) => error);

    // Assess
    expect(requests).toBe(1);
    expect(slept).toEqual([]);
    expect(failure).toMatchObject({
      message: 'The model provider is throttling requests (HTTP 429); gave up after 1 attempt in 0 s.',
    });
  });

  it('does not retry a refusal that another attempt cannot change (HTTP 400, 401)', async () => {
    // Prepare
    answers = [{ status: 400 }];

    // Act
    const failure = await createModel({ baseUrl: providerUrl })
      .converse(request)
      .catch((error: unknown) => error);

    // Assess
    expect(requests).toBe(1);
    expect(failure).toMatchObject({ message: 'The model provider refused the request (HTTP 400).' });
  });
});
