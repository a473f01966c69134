import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { teamTools } from 'countersign-team-tools';
import { S3BlobStore } from '../adapters/blob-store.js';
import { DynamoConfigurationRepository } from '../adapters/dynamo/configuration-repository.js';
import { DynamoPageStore } from '../adapters/dynamo/page-store.js';
import { DynamoRunRepository } from '../adapters/dynamo/run-repository.js';
import { DynamoUserDirectory } from '../adapters/dynamo/user-directory.js';
import { EmbeddedMetrics } from '../adapters/embedded-metrics.js';
import { createKmsKeyWrapping, EnvelopeSealer } from '../adapters/envelope-sealer.js';
import { EventBridgeRunNotifier } from '../adapters/event-bridge-run-notifier.js';
import { meterRunRepository } from '../adapters/metered-run-repository.js';
import { BedrockConverseModel } from '../adapters/models/bedrock-converse-model.js';
import { createModelProviderResolver } from '../adapters/models/model-provider-resolver.js';
import {
  createSecretsManagerKeySource,
  OpenAiCompatibleModel,
} from '../adapters/models/openai-compatible-model.js';
import { ScriptedModel } from '../adapters/models/scripted-model.js';
import { StepFunctionsRunExecutions } from '../adapters/step-functions-run-executions.js';
import { StructuredLogger } from '../adapters/structured-logger.js';
import { systemClock } from '../core/ports.js';
import type { RunDependencies } from '../core/runs/run-dependencies.js';
import { ToolRegistry } from '../core/tools/tool.js';
import { createBuiltInTools } from '../tools/built-in-tools.js';
import { lambdaEnvironment } from './config.js';

let dependencies: RunDependencies | undefined;

/**
 * The deployed composition root: AWS adapters behind the core's ports, built once per
 * container (cold start) from the validated environment. Clients are created here and
 * nowhere else, so a handler never opens a connection per request.
 */
export function awsDependencies(): RunDependencies {
  dependencies ??= buildAwsDependencies();
  return dependencies;
}

function buildAwsDependencies(): RunDependencies {
  const environment = lambdaEnvironment();
  const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const tableName = environment.COUNTERSIGN_TABLE_NAME;
  const blobStore = new S3BlobStore({
    client: new S3Client({}),
    bucketName: environment.COUNTERSIGN_OVERFLOW_BUCKET,
    kmsKeyId: environment.COUNTERSIGN_SEALING_KEY_ARN,
  });
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
  // Service name, level and sampling come from the POWERTOOLS_* variables the construct sets.
  const logger = new StructuredLogger();
  const metrics = new EmbeddedMetrics({ logger });
  return {
    runs: meterRunRepository(
      new DynamoRunRepository({ client: documentClient, tableName, blobStore }),
      metrics,
    ),
    sealer: new EnvelopeSealer({
      keyWrapping: createKmsKeyWrapping({ keyArn: environment.COUNTERSIGN_SEALING_KEY_ARN }),
    }),
    configurations: new DynamoConfigurationRepository({ client: documentClient, tableName }),
    users: new DynamoUserDirectory({ client: documentClient, tableName }),
    pages: new DynamoPageStore({ client: documentClient, tableName }),
    tools: new ToolRegistry([...createBuiltInTools(), ...teamTools]),
    models: createModelProviderResolver({
      bedrock: new BedrockConverseModel(new BedrockRuntimeClient({})),
      ...(openAiCompatible ? { openAiCompatible } : {}),
      scripted: new ScriptedModel(),
    }),
    executions: new StepFunctionsRunExecutions({
      client: new SFNClient({}),
      ...(environment.COUNTERSIGN_STATE_MACHINE_ARN
        ? { stateMachineArn: environment.COUNTERSIGN_STATE_MACHINE_ARN }
        : {}),
    }),
    notifier: new EventBridgeRunNotifier({
      client: new EventBridgeClient({}),
      eventBusName: environment.COUNTERSIGN_EVENT_BUS_NAME,
    }),
    clock: systemClock,
    logger,
    metrics,
    settings: {
      approvalTimeoutSeconds: environment.COUNTERSIGN_APPROVAL_TIMEOUT_SECONDS,
      maxTurns: environment.COUNTERSIGN_MAX_TURNS,
    },
    newId: () => crypto.randomUUID(),
  };
}
