import { Stack, Validations } from 'aws-cdk-lib';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';

/** The handlers that call the model: a run's model turn, and completion and translation. */
export const MODEL_CALLING_HANDLERS = ['model-turn', 'api-generate'] as const;

/** Which model backs `model-turn` and `api-generate`. */
export type ModelProvider = 'bedrock' | 'openai-compatible' | 'scripted';

/** An OpenAI-compatible chat completions endpoint and the secret that holds its API key. */
export interface OpenAiCompatibleEndpoint {
  /** Base URL of the endpoint, `https://...`. */
  readonly baseUrl: string;
  /** The secret whose value is the API key; only `model-turn` and `api-generate` may read it. */
  readonly apiKeySecret: ISecret;
}

/** Bedrock geography prefixes of cross-Region inference profile ids (`us.anthropic...`). */
const INFERENCE_PROFILE_PREFIXES = ['us', 'us-gov', 'eu', 'apac', 'jp', 'au', 'ca', 'global'];

/** The model the deployment calls: the provider, and its model id or endpoint. */
export interface ModelAccess {
  readonly modelProvider: ModelProvider;
  readonly bedrockModelId: string;
  readonly openAiCompatible?: OpenAiCompatibleEndpoint;
}

/**
 * Lets each caller reach the configured model and nothing else: Bedrock invocation of that one
 * model, or reading the OpenAI-compatible endpoint's API key secret. The scripted model needs none.
 *
 * @example
 * grantModelAccess([functions.get('model-turn'), functions.get('api-generate')], settings);
 */
export function grantModelAccess(callers: readonly LambdaFunction[], model: ModelAccess): void {
  for (const caller of callers) {
    if (model.modelProvider === 'bedrock') grantModelInvocation(caller, model.bedrockModelId);
    if (model.modelProvider === 'openai-compatible' && model.openAiCompatible !== undefined) {
      model.openAiCompatible.apiKeySecret.grantRead(caller);
    }
  }
}

/**
 * bedrock:InvokeModel (and CountTokens) on the configured model only. An inference profile
 * also needs the foundation model in every Region the profile may route to.
 */
function grantModelInvocation(grantee: LambdaFunction, modelId: string): void {
  const stack = Stack.of(grantee);
  const [prefix] = modelId.split('.');
  const isInferenceProfile = prefix !== undefined && INFERENCE_PROFILE_PREFIXES.includes(prefix);
  // The context-window manager asks Bedrock for its own token count, on the foundation model.
  Grant.addToPrincipal({
    grantee,
    actions: ['bedrock:CountTokens'],
    resourceArns: [
      `arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${isInferenceProfile ? modelId.slice(`${prefix}.`.length) : modelId}`,
    ],
  });
  if (!isInferenceProfile) {
    Grant.addToPrincipal({
      grantee,
      actions: ['bedrock:InvokeModel'],
      resourceArns: [`arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${modelId}`],
    });
    return;
  }
  const foundationModelId = modelId.slice(`${prefix}.`.length);
  Grant.addToPrincipal({
    grantee,
    actions: ['bedrock:InvokeModel'],
    resourceArns: [
      `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:inference-profile/${modelId}`,
      `arn:${stack.partition}:bedrock:*::foundation-model/${foundationModelId}`,
    ],
  });
  const role = grantee.role ?? grantee;
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${foundationModelId}]`,
    reason:
      'A Bedrock cross-Region inference profile routes each call to the foundation model in a Region Bedrock picks at call time, so the model ARN must allow any Region; it names one model only.',
  });
}
