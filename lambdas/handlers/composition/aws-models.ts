import { createModelProviderResolver } from '../../adapters/models/model-provider-resolver.js';
import { ScriptedModel } from '../../adapters/models/scripted-model.js';
import type { ModelCallOptions, ModelProvider, ModelRequest } from '../../core/model.js';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { lambdaEnvironment } from '../config.js';

let models: RunDependencies['models'] | undefined;

/**
 * Attempts of a throttled or failed Bedrock call (the SDK's standard retry: exponential
 * backoff with full jitter on ThrottlingException, 5xx and network errors; 3 by default).
 */
export const BEDROCK_MAX_ATTEMPTS = 5;

/**
 * The model providers: Bedrock Converse, an OpenAI-compatible endpoint when configured, scripted.
 * A configuration names one provider, so each provider's adapter and SDK client are imported on
 * its first call: a Bedrock deployment never loads Secrets Manager, an OpenAI-compatible one
 * never loads Bedrock.
 */
export function awsModels(): RunDependencies['models'] {
  models ??= buildModels();
  return models;
}

function buildModels(): RunDependencies['models'] {
  const environment = lambdaEnvironment();
  const baseUrl = environment.COUNTERSIGN_OPENAI_BASE_URL;
  const secretArn = environment.COUNTERSIGN_OPENAI_SECRET_ARN;
  const bedrock = onFirstCall('bedrock', async () => {
    const [{ BedrockRuntimeClient }, { BedrockConverseModel }] = await Promise.all([
      import('@aws-sdk/client-bedrock-runtime'),
      import('../../adapters/models/bedrock-converse-model.js'),
    ]);
    return new BedrockConverseModel(new BedrockRuntimeClient({ maxAttempts: BEDROCK_MAX_ATTEMPTS }));
  });
  const openAiCompatible =
    baseUrl && secretArn
      ? onFirstCall('openai-compatible', async () => {
          const [{ SecretsManagerClient }, { createSecretsManagerKeySource, OpenAiCompatibleModel }] =
            await Promise.all([
              import('@aws-sdk/client-secrets-manager'),
              import('../../adapters/models/openai-compatible-model.js'),
            ]);
          return new OpenAiCompatibleModel({
            baseUrl,
            apiKey: createSecretsManagerKeySource(new SecretsManagerClient({}), secretArn),
          });
        })
      : undefined;
  return createModelProviderResolver({
    bedrock: {
      ...bedrock,
      countInputTokens: async (request) => (await bedrock.load()).countInputTokens?.(request) ?? Number.NaN,
    },
    ...(openAiCompatible ? { openAiCompatible } : {}),
    scripted: new ScriptedModel(),
  });
}

/** A provider whose module and client are imported when it is first asked to converse. */
function onFirstCall(name: string, create: () => Promise<ModelProvider>) {
  let provider: Promise<ModelProvider> | undefined;
  const load = (): Promise<ModelProvider> => {
    provider ??= create();
    return provider;
  };
  return {
    name,
    load,
    converse: async (request: ModelRequest, options?: ModelCallOptions) =>
      (await load()).converse(request, options),
  } satisfies ModelProvider & { load: typeof load };
}
