import type { ModelProvider, ModelRequest } from '../model.js';
import type { RunDependencies } from '../run-dependencies.js';
import { chooseTokenEstimator } from './choose-token-estimator.js';
import { type FittedSend, fitContextWindow } from './fit-context-window.js';

/**
 * One model send bounded by the context window (docs/skills.md), the same way for a run's model turn
 * and for text generation: the configured window wins, the scripted stand-in has none, other
 * models use the estimator's table. What was left out is counted and logged with `logFields`
 * (identifiers only, never message or skill text); a send that cannot fit throws `model-failed`.
 *
 * @example
 * const send = await fitModelSend(dependencies, { provider: 'bedrock', model, request, logFields: { runId } });
 * await model.converse({ ...request, messages: send.messages });
 */
export async function fitModelSend(
  dependencies: Pick<RunDependencies, 'logger' | 'metrics' | 'settings'>,
  input: {
    /** The configuration's provider name. */
    provider: string;
    model: ModelProvider;
    /** The whole request; `maxTokens` is reserved for the reply. */
    request: ModelRequest & { maxTokens: number };
    logFields: Record<string, unknown>;
  },
): Promise<FittedSend> {
  const { request, logFields } = input;
  const send = await fitContextWindow({
    ...request,
    ...contextWindowOf(input.provider, dependencies.settings.contextWindowTokens),
    loadEstimator: chooseTokenEstimator(input.model, request),
  });
  if (send.trimmedMessages > 0) {
    dependencies.metrics.count('ContextMessagesTrimmed', send.trimmedMessages);
    dependencies.logger.info('oldest messages left out of this send to fit the context window', {
      ...logFields,
      trimmedMessages: send.trimmedMessages,
      budgetTokens: send.budgetTokens,
    });
  }
  if (send.skillBlockDropped) {
    dependencies.metrics.count('SkillsDropped');
    dependencies.logger.warn('skills block left out of this send: the context window is too small for it', {
      ...logFields,
      budgetTokens: send.budgetTokens,
    });
  }
  return send;
}

function contextWindowOf(provider: string, configured: number | undefined): { contextWindowTokens?: number } {
  if (configured) return { contextWindowTokens: configured };
  return provider === 'scripted' ? { contextWindowTokens: Number.POSITIVE_INFINITY } : {};
}
