import { Readable } from 'node:stream';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { describe, expect, it } from 'vitest';
import { BedrockConverseModel } from '../../../lambdas/adapters/models/bedrock-converse-model.js';
import { CountersignError } from '../../../lambdas/core/errors.js';
import type { ModelRequest } from '../../../lambdas/core/model.js';
import { fixtureBodyText, loadModelFixture } from './model-fixtures.js';

interface CapturedRequest {
  method: string;
  path: string;
  body: unknown;
}

/**
 * A real BedrockRuntimeClient whose transport answers with a fixture, so the SDK's own
 * serialisation, error parsing and deserialisation run exactly as they do against AWS.
 */
function createClientAnswering(fixtureName: string | Error) {
  const captured: CapturedRequest[] = [];
  const client = new BedrockRuntimeClient({
    region: 'eu-central-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example-secret' },
    maxAttempts: 1,
    requestHandler: {
      async handle(request: { method: string; path: string; body?: unknown }) {
        captured.push({
          method: request.method,
          path: request.path,
          body: JSON.parse(
            typeof request.body === 'string'
              ? request.body
              : new TextDecoder().decode(request.body as Uint8Array),
          ),
        });
        if (fixtureName instanceof Error) throw fixtureName;
        const fixture = loadModelFixture(fixtureName);
        return {
          response: {
            statusCode: fixture.statusCode,
            headers: fixture.headers,
            body: Readable.from([Buffer.from(fixtureBodyText(fixture), 'utf8')]),
          },
        };
      },
    },
  });
  return { model: new BedrockConverseModel(client), captured };
}

const request: ModelRequest = {
  model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
  system: 'You edit page metadata.',
  maxTokens: 1024,
  temperature: 0,
  tools: [
    {
      name: 'update_page_metadata',
      description: 'Sets metadata.',
      inputSchema: { type: 'object', properties: { pageId: { type: 'string' } }, required: ['pageId'] },
    },
  ],
  messages: [
    { role: 'user', content: [{ type: 'text', text: "Set the description of page 12 to 'Spring sale'" }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Setting it.' },
        { type: 'tool_call', callId: 'call-1', name: 'update_page_metadata', arguments: { pageId: '12' } },
        { type: 'tool_call', callId: 'call-2', name: 'update_page_metadata', arguments: { pageId: '13' } },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          callId: 'call-1',
          content: 'Updated page 12 (en): description.',
          isError: false,
        },
        { type: 'tool_result', callId: 'call-2', content: 'Error: denied.', isError: true },
      ],
    },
  ],
};

describe('BedrockConverseModel', () => {
  it('sends messages, tool calls, tool results, the system prompt, tools and inference config in Converse terms', async () => {
    // Prepare
    const { model, captured } = createClientAnswering('bedrock/converse-end-turn.json');

    // Act
    await model.converse(request);

    // Assess
    expect(captured).toHaveLength(1);
    expect(captured[0]?.method).toBe('POST');
    expect(decodeURIComponent(captured[0]?.path ?? '')).toBe(
      '/model/anthropic.claude-3-5-sonnet-20240620-v1:0/converse',
    );
    expect(captured[0]?.body).toEqual({
      system: [{ text: 'You edit page metadata.' }],
      inferenceConfig: { maxTokens: 1024, temperature: 0 },
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'update_page_metadata',
              description: 'Sets metadata.',
              inputSchema: {
                json: { type: 'object', properties: { pageId: { type: 'string' } }, required: ['pageId'] },
              },
            },
          },
        ],
      },
      messages: [
        { role: 'user', content: [{ text: "Set the description of page 12 to 'Spring sale'" }] },
        {
          role: 'assistant',
          content: [
            { text: 'Setting it.' },
            { toolUse: { toolUseId: 'call-1', name: 'update_page_metadata', input: { pageId: '12' } } },
            { toolUse: { toolUseId: 'call-2', name: 'update_page_metadata', input: { pageId: '13' } } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              toolResult: { toolUseId: 'call-1', content: [{ text: 'Updated page 12 (en): description.' }] },
            },
            { toolResult: { toolUseId: 'call-2', content: [{ text: 'Error: denied.' }], status: 'error' } },
          ],
        },
      ],
    });
  });

  it('leaves out the system prompt, tool config and inference config when there are none', async () => {
    // Prepare
    const { model, captured } = createClientAnswering('bedrock/converse-end-turn.json');

    // Act
    await model.converse({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      tools: [],
    });

    // Assess
    expect(captured[0]?.body).toEqual({ messages: [{ role: 'user', content: [{ text: 'Hi' }] }] });
  });

  it('maps a tool_use reply to text and tool calls with usage', async () => {
    // Prepare
    const { model } = createClientAnswering('bedrock/converse-tool-use.json');

    // Act
    const reply = await model.converse(request);

    // Assess
    expect(reply).toEqual({
      stopReason: 'tool_use',
      usage: { inputTokens: 612, outputTokens: 97 },
      attempts: { total: 1, throttled: 0 },
      content: [
        { type: 'text', text: 'I will set the description of page 12.' },
        {
          type: 'tool_call',
          callId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
          name: 'update_page_metadata',
          arguments: { pageId: '12', description: 'Spring sale' },
        },
        {
          type: 'tool_call',
          callId: 'tooluse_Q1w2e3r4t5y6u7i8o9p0aa',
          name: 'get_page',
          arguments: { pageId: '13' },
        },
      ],
    });
  });

  it.each([
    ['bedrock/converse-end-turn.json', 'end_turn'],
    ['bedrock/converse-max-tokens.json', 'max_tokens'],
  ])('maps the stop reason of %s to %s', async (fixture, stopReason) => {
    // Prepare
    const { model } = createClientAnswering(fixture);

    // Act
    const reply = await model.converse(request);

    // Assess
    expect(reply.stopReason).toBe(stopReason);
    expect(reply.content[0]?.type).toBe('text');
  });

  it.each([
    [
      'bedrock/throttling.json',
      'Bedrock is throttling requests (ThrottlingException); try again later.',
      { code: 'model-unavailable', transient: true },
    ],
    [
      'bedrock/validation-error.json',
      'Bedrock refused the request (ValidationException, HTTP 400).',
      { code: 'model-failed', transient: false },
    ],
    [
      'bedrock/internal-error.json',
      'Bedrock failed to answer (InternalServerException, HTTP 500).',
      { code: 'model-unavailable', transient: true },
    ],
    [
      'bedrock/garbage.json',
      'Bedrock returned a reply that could not be read.',
      { code: 'model-failed', transient: false },
    ],
    [
      'bedrock/no-message.json',
      'Bedrock returned a reply without a message.',
      { code: 'model-failed', transient: false },
    ],
  ])('turns %s into a failure with a safe reason, transient or not', async (fixture, reason, kind) => {
    // Prepare
    const { model } = createClientAnswering(fixture);
    const providerText = loadModelFixture(fixture);

    // Act
    const failure = await model.converse(request).catch((error: unknown) => error);

    // Assess
    expect(failure).toBeInstanceOf(CountersignError);
    expect(failure).toMatchObject({ ...kind, message: reason });
    expect((failure as Error).cause).toBeUndefined();
    expect(JSON.stringify(providerText)).not.toContain(reason);
  });

  it('reports an unreachable endpoint without the network error text', async () => {
    // Prepare
    const networkError = Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:443'), {
      code: 'ECONNREFUSED',
    });
    const { model } = createClientAnswering(networkError);

    // Act
    const failure = await model.converse(request).catch((error: unknown) => error);

    // Assess
    expect(failure).toMatchObject({
      code: 'model-unavailable',
      transient: true,
      message: 'Bedrock could not be reached (Error).',
    });
    expect((failure as Error).message).not.toContain('10.0.0.9');
  });
});
