import { MODEL_PROVIDER_NAMES } from '../../core/configurations.js';
import { CountersignError } from '../../core/errors.js';
import type { ModelProvider, ModelProviderResolver } from '../../core/model.js';

/** The providers a deployment has configured; a missing one is refused when a configuration names it. */
export interface ModelProviders {
  readonly bedrock?: ModelProvider;
  readonly openAiCompatible?: ModelProvider;
  readonly scripted?: ModelProvider;
}

/**
 * Resolves a configuration's provider name (`bedrock`, `openai-compatible`, `scripted`) to
 * the provider this deployment built. An unknown or unconfigured name is a
 * `CountersignError('configuration')` that names it, raised when the run asks, not silently
 * replaced by another provider.
 *
 * @example
 * const models = createModelProviderResolver({ bedrock: new BedrockConverseModel(client), scripted: new ScriptedModel() });
 * models.resolve('bedrock').converse(request);
 */
export function createModelProviderResolver(providers: ModelProviders): ModelProviderResolver {
  const byName = new Map<string, ModelProvider | undefined>([
    ['bedrock', providers.bedrock],
    ['openai-compatible', providers.openAiCompatible],
    ['scripted', providers.scripted],
  ]);
  return {
    resolve(providerName: string): ModelProvider {
      const quoted = JSON.stringify(providerName.slice(0, 100));
      if (!byName.has(providerName)) {
        throw new CountersignError(
          'configuration',
          `Model provider ${quoted} is unknown: use one of ${MODEL_PROVIDER_NAMES.join(', ')}.`,
        );
      }
      const provider = byName.get(providerName);
      if (provider === undefined) {
        throw new CountersignError(
          'configuration',
          `Model provider ${quoted} is not configured in this deployment: configure it or choose another provider.`,
        );
      }
      return provider;
    },
  };
}
