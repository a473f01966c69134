import { describe, expect, it } from 'vitest';
import { callModel, type ModelCallDependencies } from '../../../lambdas/core/generation/call-model.js';
import { estimateModelCost } from '../../../lambdas/core/generation/model-prices.js';
import { ModelCallFailure, type ModelProvider, type ModelReply } from '../../../lambdas/core/model.js';
import type { Metrics } from '../../../lambdas/core/ports.js';

type Recorded = { name: string; value: number; unit?: string; dimensions: Record<string, string> };

/** A clock that moves 120 ms between reads, metrics and log lines recorded as they were sent. */
function setUp(modelPrices?: ModelCallDependencies['settings']['modelPrices']) {
  const recorded: Recorded[] = [];
  const lines: Array<{ message: string; fields: Record<string, unknown> }> = [];
  let now = Date.parse('2026-03-01T10:00:00.000Z');
  const metrics: Metrics = {
    count: (name, value = 1, dimensions = {}) => {
      recorded.push({ name, value, dimensions });
    },
    observe: (name, value, unit, dimensions = {}) => {
      recorded.push({ name, value, unit, dimensions });
    },
  };
  const log = (message: string, fields: Record<string, unknown> = {}) => {
    lines.push({ message, fields });
  };
  const dependencies: ModelCallDependencies = {
    clock: {
      now: () => {
        now += 120;
        return new Date(now);
      },
    },
    logger: { debug: log, info: log, warn: log, error: log },
    metrics,
    settings: { approvalTimeoutSeconds: 3600, maxTurns: 50, ...(modelPrices ? { modelPrices } : {}) },
  };
  const of = (name: string, dimensions: Record<string, string>) =>
    recorded.filter(
      (entry) => entry.name === name && JSON.stringify(entry.dimensions) === JSON.stringify(dimensions),
    );
  return { dependencies, recorded, lines, of };
}

const BY_CONFIGURATION = { configuration: 'support-bot', provider: 'openai-compatible' };
const request = { model: 'gpt-test', messages: [], tools: [] };

function answering(reply: ModelReply | Error): ModelProvider {
  return {
    name: 'openai-compatible',
    converse: async () => {
      if (reply instanceof Error) throw reply;
      return reply;
    },
  };
}

describe('callModel', () => {
  it('counts tokens, latency, retries and throttles by configuration and for the deployment, and prices them', async () => {
    // Prepare
    const { dependencies, of, lines } = setUp({
      'gpt-test': { inputPerMillionTokens: 3, outputPerMillionTokens: 15 },
    });
    const model = answering({
      content: [{ type: 'text', text: 'SECRET-REPLY' }],
      stopReason: 'end_turn',
      usage: { inputTokens: 2000, outputTokens: 100 },
      attempts: { total: 3, throttled: 2 },
    });

    // Act
    const reply = await callModel(dependencies, {
      configurationId: 'support-bot',
      provider: 'openai-compatible',
      model,
      request,
      logFields: { runId: 'run-1' },
    });

    // Assess
    expect(reply.usage).toEqual({ inputTokens: 2000, outputTokens: 100 });
    for (const dimensions of [BY_CONFIGURATION, {}]) {
      expect(of('ModelCalls', dimensions).map((entry) => entry.value)).toEqual([1]);
      expect(of('ModelInputTokens', dimensions).map((entry) => entry.value)).toEqual([2000]);
      expect(of('ModelOutputTokens', dimensions).map((entry) => entry.value)).toEqual([100]);
      expect(of('ModelRetries', dimensions).map((entry) => entry.value)).toEqual([2]);
      expect(of('ModelThrottles', dimensions).map((entry) => entry.value)).toEqual([2]);
      expect(of('ModelErrors', dimensions)).toEqual([]);
      expect(of('ModelLatency', dimensions)[0]).toMatchObject({ unit: 'Milliseconds' });
      expect(of('ModelCost', dimensions)).toEqual([
        { name: 'ModelCost', value: 0.0075, unit: 'None', dimensions },
      ]);
    }
    expect(lines).toEqual([
      {
        message: 'model called',
        fields: expect.objectContaining({
          runId: 'run-1',
          ...BY_CONFIGURATION,
          model: 'gpt-test',
          usage: { input: 2000, output: 100 },
          attempts: 3,
          estimatedCostUsd: 0.0075,
        }),
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain('SECRET-REPLY');
  });

  it('records no cost for a model the price table leaves out, and still counts its tokens', async () => {
    // Prepare
    const { dependencies, recorded } = setUp({
      other: { inputPerMillionTokens: 1, outputPerMillionTokens: 1 },
    });

    // Act
    await callModel(dependencies, {
      configurationId: 'support-bot',
      provider: 'openai-compatible',
      model: answering({ content: [], stopReason: 'end_turn', usage: { inputTokens: 5, outputTokens: 1 } }),
      request,
      logFields: {},
    });

    // Assess
    expect(recorded.filter((entry) => entry.name === 'ModelCost')).toEqual([]);
    expect(recorded.filter((entry) => entry.name === 'ModelInputTokens').map((entry) => entry.value)).toEqual(
      [5, 5],
    );
  });

  it('counts a failed call as an error with its throttled attempts, logs its class only, and throws it on', async () => {
    // Prepare
    const { dependencies, of, lines } = setUp();
    const failure = new ModelCallFailure('The model provider is throttling requests (HTTP 429); gave up.', {
      transient: true,
      attempts: { total: 4, throttled: 4 },
    });

    // Act
    const thrown = await callModel(dependencies, {
      configurationId: 'support-bot',
      provider: 'openai-compatible',
      model: answering(failure),
      request,
      logFields: { runId: 'run-2' },
    }).catch((error: unknown) => error);

    // Assess
    expect(thrown).toBe(failure);
    expect(failure.code).toBe('model-unavailable');
    for (const dimensions of [BY_CONFIGURATION, {}]) {
      expect(of('ModelErrors', dimensions).map((entry) => entry.value)).toEqual([1]);
      expect(of('ModelThrottles', dimensions).map((entry) => entry.value)).toEqual([4]);
      expect(of('ModelRetries', dimensions).map((entry) => entry.value)).toEqual([3]);
      expect(of('ModelInputTokens', dimensions)).toEqual([]);
    }
    expect(lines).toEqual([
      {
        message: 'model call failed',
        fields: expect.objectContaining({ runId: 'run-2', errorClass: 'CountersignError', transient: true }),
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain('HTTP 429');
  });
});

describe('estimateModelCost', () => {
  it('prices input and output tokens per million, and gives no price for an unknown model', () => {
    // Act
    const prices = { m: { inputPerMillionTokens: 3, outputPerMillionTokens: 15 } };

    // Assess
    expect(estimateModelCost(prices, 'm', { inputTokens: 1_000_000, outputTokens: 0 })).toBe(3);
    expect(estimateModelCost(prices, 'm', { inputTokens: 0, outputTokens: 2_000_000 })).toBe(30);
    expect(estimateModelCost(prices, 'unknown', { inputTokens: 1, outputTokens: 1 })).toBeUndefined();
    expect(estimateModelCost(undefined, 'm', { inputTokens: 1, outputTokens: 1 })).toBeUndefined();
  });
});
