import { nameErrorClass } from '../errors.js';
import {
  ModelCallFailure,
  type ModelCallOptions,
  type ModelProvider,
  type ModelReply,
  type ModelRequest,
} from '../model.js';
import type { RunDependencies } from '../run-dependencies.js';
import { estimateModelCost } from './model-prices.js';

/** What {@link callModel} measures a call by: the configuration it serves and the provider it reaches. */
export interface ModelCallInput {
  readonly configurationId: string;
  /** The configuration's provider name (`bedrock`, `openai-compatible`, `scripted`). */
  readonly provider: string;
  readonly model: ModelProvider;
  readonly request: ModelRequest;
  /** The caller's deadline, passed on to the provider. @default - none */
  readonly options?: ModelCallOptions;
  /** Identifiers for the log lines (a run id), never text. */
  readonly logFields: Readonly<Record<string, unknown>>;
}

export type ModelCallDependencies = Pick<RunDependencies, 'clock' | 'logger' | 'metrics' | 'settings'>;

/**
 * One model call, measured: its tokens, latency, retries and throttles, its failure, and its
 * estimated cost (the `modelPrices` prop; none for an unpriced model). Every metric is counted
 * by `configuration` and `provider`, for the dashboard's lines, and without them, for the
 * alarms (an alarm cannot search). The run's model turn and text generation both call the
 * model through here, so the dashboard's spend covers every call. The log line carries
 * identifiers and numbers, never a prompt or a reply.
 *
 * @example
 * const reply = await callModel(dependencies, {
 *   configurationId: 'support-bot', provider: 'bedrock', model, request, logFields: { runId },
 * });
 */
export async function callModel(
  dependencies: ModelCallDependencies,
  input: ModelCallInput,
): Promise<ModelReply> {
  const { metrics } = dependencies;
  const byConfiguration = { configuration: input.configurationId, provider: input.provider };
  const startedAt = dependencies.clock.now().getTime();
  const latency = () => dependencies.clock.now().getTime() - startedAt;
  let reply: ModelReply;
  try {
    reply = await input.model.converse(input.request, input.options);
  } catch (error) {
    const attempts = error instanceof ModelCallFailure ? error.attempts : { total: 1, throttled: 0 };
    for (const dimensions of [byConfiguration, {}]) {
      metrics.count('ModelCalls', 1, dimensions);
      metrics.count('ModelErrors', 1, dimensions);
      metrics.count('ModelThrottles', attempts.throttled, dimensions);
      metrics.count('ModelRetries', attempts.total - 1, dimensions);
      metrics.observe('ModelLatency', latency(), 'Milliseconds', dimensions);
    }
    dependencies.logger.warn('model call failed', {
      ...input.logFields,
      ...byConfiguration,
      errorClass: nameErrorClass(error),
      transient: error instanceof ModelCallFailure ? error.transient : undefined,
      attempts: attempts.total,
      latencyMilliseconds: latency(),
    });
    throw error;
  }
  const attempts = reply.attempts ?? { total: 1, throttled: 0 };
  const usage = reply.usage ?? { inputTokens: 0, outputTokens: 0 };
  const cost = estimateModelCost(dependencies.settings.modelPrices, input.request.model, usage);
  for (const dimensions of [byConfiguration, {}]) {
    metrics.count('ModelCalls', 1, dimensions);
    metrics.count('ModelInputTokens', usage.inputTokens, dimensions);
    metrics.count('ModelOutputTokens', usage.outputTokens, dimensions);
    metrics.count('ModelThrottles', attempts.throttled, dimensions);
    metrics.count('ModelRetries', attempts.total - 1, dimensions);
    metrics.observe('ModelLatency', latency(), 'Milliseconds', dimensions);
    if (cost !== undefined) metrics.observe('ModelCost', cost, 'None', dimensions);
  }
  dependencies.logger.info('model called', {
    ...input.logFields,
    ...byConfiguration,
    model: input.request.model,
    // Not `inputTokens`: the log formatter drops every field whose name says token.
    usage: { input: usage.inputTokens, output: usage.outputTokens },
    attempts: attempts.total,
    latencyMilliseconds: latency(),
    ...(cost === undefined ? {} : { estimatedCostUsd: cost }),
  });
  return reply;
}
