import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createStaticKeySource,
  MODEL_RESPONSE_MAX_BYTES,
  OpenAiCompatibleModel,
  type OpenAiCompatibleModelOptions,
} from '../../../lambdas/adapters/models/openai-compatible-model.js';
import type { ModelRequest } from '../../../lambdas/core/model.js';
import { type MisbehavingServer, startMisbehavingServer } from '../../support/misbehaving-server.js';
import { fixtureBodyText, loadModelFixture } from './model-fixtures.js';

// The OpenAI-compatible provider under the outbound policy (lambdas/adapters/outbound/): the
// misbehaviours of issue #30, against a local server that redirects, bloats and hangs.

const request: ModelRequest = {
  model: 'gpt-4o',
  system: 'You edit page metadata.',
  tools: [],
  messages: [
    { role: 'user', content: [{ type: 'text', text: "Set the description of page 12 to 'Spring sale'" }] },
  ],
};

/** Waits the model asked for, recorded instead of waited. */
const slept: number[] = [];

function createModel(options: Partial<OpenAiCompatibleModelOptions> & { baseUrl: string }) {
  return new OpenAiCompatibleModel({
    apiKey: createStaticKeySource('sk-test-key'),
    random: () => 0.5,
    sleep: async (milliseconds) => {
      slept.push(milliseconds);
    },
    ...options,
  });
}

describe('OpenAiCompatibleModel within the outbound policy', () => {
  let provider: MisbehavingServer;
  let elsewhere: MisbehavingServer;

  beforeAll(async () => {
    [provider, elsewhere] = await Promise.all([startMisbehavingServer(), startMisbehavingServer()]);
  });

  afterEach(() => {
    provider.received.length = 0;
    elsewhere.received.length = 0;
    slept.length = 0;
  });

  afterAll(async () => {
    await Promise.all([provider.stop(), elsewhere.stop()]);
  });

  it('refuses a 307 to another origin: the prompt, the skills and the key go nowhere else', async () => {
    // Prepare
    provider.behave({ kind: 'redirect', status: 307, location: `${elsewhere.origin}/v1/chat/completions` });
    elsewhere.behave({
      kind: 'answer',
      body: fixtureBodyText(loadModelFixture('openai-compatible/chat-stop.json')),
    });

    // Act
    const failure = await createModel({ baseUrl: `${provider.origin}/v1` })
      .converse(request)
      .catch((error: unknown) => error);

    // Assess
    expect(failure).toMatchObject({
      code: 'model-failed',
      message: 'The model provider answered with a redirect to another origin; it was not followed.',
    });
    expect(provider.received).toHaveLength(1);
    expect(elsewhere.received).toEqual([]);
  });

  it('refuses a 20 MiB reply instead of reading it and passing it on', async () => {
    // Prepare
    provider.behave({ kind: 'bloat', bytes: 20 * 1024 * 1024, encoding: 'gzip', declareLength: false });

    // Act
    const failure = await createModel({ baseUrl: `${provider.origin}/v1` })
      .converse(request)
      .catch((error: unknown) => error);

    // Assess
    expect(failure).toMatchObject({
      code: 'model-failed',
      message: `The model provider's reply exceeds ${MODEL_RESPONSE_MAX_BYTES / (1024 * 1024)} MiB; it was not read.`,
    });
    expect(provider.received).toHaveLength(1);
  });

  it('sends no attempt after the caller deadline passed, while waiting to retry or in an attempt', async () => {
    // Prepare: the provider fails with 504 and would be asked four times; the caller gives up first.
    provider.behave({ kind: 'answer', status: 504, body: '{}' });
    const caller = new AbortController();
    const waitingModel = createModel({
      baseUrl: `${provider.origin}/v1`,
      sleep: (milliseconds, signal) =>
        new Promise((resolve, reject) => {
          slept.push(milliseconds);
          // The caller's deadline passes during the first wait.
          caller.abort(new Error('the request timed out'));
          if (signal?.aborted) reject(signal.reason);
          else resolve();
        }),
    });
    const hangingProvider = await startMisbehavingServer();
    hangingProvider.behave({ kind: 'hang' });
    const inAttempt = new AbortController();
    setTimeout(() => inAttempt.abort(new Error('the request timed out')), 100);

    // Act
    const betweenAttempts = await waitingModel
      .converse(request, { signal: caller.signal })
      .catch((error: unknown) => error);
    const duringAttempt = await createModel({ baseUrl: `${hangingProvider.origin}/v1` })
      .converse(request, { signal: inAttempt.signal })
      .catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 100));

    // Assess: one request each, and nothing after the deadline.
    expect(betweenAttempts).toMatchObject({
      code: 'model-failed',
      message: 'The model call was ended by its caller.',
    });
    expect(duringAttempt).toMatchObject({
      code: 'model-failed',
      message: 'The model call was ended by its caller.',
    });
    expect(provider.received).toHaveLength(1);
    expect(hangingProvider.received).toHaveLength(1);
    await hangingProvider.stop();
  });
});
