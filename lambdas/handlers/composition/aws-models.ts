import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { BedrockConverseModel } from '../../adapters/models/bedrock-converse-model.js';
import { createModelProviderResolver } from '../../adapters/models/model-provider-resolver.js';
import {
  createSecretsManagerKeySource,
  OpenAiCompatibleModel,
} from '../../adapters/models/openai-compatible-model.js';
import { ScriptedModel } from '../../adapters/models/scripted-model.js';
import type { RunDependencies } from '../../core/runs/run-dependencies.js';
import { lambdaEnvironment } from '../config.js';

let models: RunDependencies['models'] | undefined;

/** The model providers: Bedrock Converse, an OpenAI-compatible endpoint when configured, scripted. */
export function awsModels(): RunDependencies['models'] {
  models ??= buildModels();
  return models;
}

function buildModels(): RunDependencies['models'] {
  const environment = lambdaEnvironment();
  const openAiCompatible =
    environment.COUNTERSIGN_OPENAI_BASE_URL && environment.COUNTERSIGN_OPENAI_SECRET_ARN
      ? new OpenAiCompatibleModel({
          baseUrl: environment.COUNTERSIGN_OPENAI_BASE_URL,
          apiKey: createSecretsManagerKeySource(
            new SecretsManagerClient({}),
            environment.COUNTERSIGN_OPENAI_SECRET_ARN,
          ),
        })
      : undefined;
  return createModelProviderResolver({
    bedrock: new BedrockConverseModel(new BedrockRuntimeClient({})),
    ...(openAiCompatible ? { openAiCompatible } : {}),
    scripted: new ScriptedModel(),
  });
}
