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
import { DynamoRunAndUserRepository } from '../adapters/dynamo/run-and-user-repository.js';
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
import { DynamoSkillRepository } from '../adapters/skills/dynamo-skill-repository.js';
import { StepFunctionsRunExecutions } from '../adapters/step-functions-run-executions.js';
import { StructuredLogger } from '../adapters/structured-logger.js';
import { systemClock } from '../core/ports.js';
import type { RunDependencies } from '../core/runs/run-dependencies.js';
import { ToolRegistry } from '../core/tools/tool.js';
import { createBuiltInTools } from '../tools/built-in-tools.js';
import { lambdaEnvironment } from './config.js';

/** What every Lambda uses: the table's stores, the clock, the logger, the metrics and the settings. */
export type AwsBaseDependencies = Pick<
  RunDependencies,
  | 'runs'
  | 'configurations'
  | 'users'
  | 'pages'
  | 'skills'
  | 'clock'
  | 'logger'
  | 'metrics'
  | 'settings'
  | 'newId'
>;

// Each part is built once per container, on first use. Plain functions over module variables
// (not a memoising helper) so esbuild drops the parts a Lambda never asks for, and with them
// their adapters: the envelope sealer alone is most of a bundle.
let base: AwsBaseDependencies | undefined;
let sealer: RunDependencies['sealer'] | undefined;
let tools: RunDependencies['tools'] | undefined;
let models: RunDependencies['models'] | undefined;
let executions: RunDependencies['executions'] | undefined;
let pausingRuns: RunDependencies['runs'] | undefined;
let notifier: RunDependencies['notifier'] | undefined;

/*
 * The deployed composition root: AWS adapters behind the core's ports, built once per
 * container (cold start) from the validated environment. Clients are created here and
 * nowhere else, so a handler never opens a connection per request. Each Lambda entry composes
 * only the parts its use case reads (`awsBaseDependencies()`, `awsSealer()`, ...), which keeps
 * every other adapter out of its bundle.
 */

/**
 * The part every Lambda uses: the DynamoDB stores (sealed state over the item limit goes to
 * the S3 overflow bucket), the clock, the logger, the metrics and the settings.
 *
 * @example
 * const prepare = createPrepareStep(awsBaseDependencies());
 */
export function awsBaseDependencies(): AwsBaseDependencies {
  base ??= buildBaseDependencies();
  return base;
}

function buildBaseDependencies(): AwsBaseDependencies {
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
  // Service name, level and sampling come from the POWERTOOLS_* variables the construct sets.
  const logger = new StructuredLogger();
  const metrics = new EmbeddedMetrics({ logger });
  return {
    runs: meterRunRepository(
      new DynamoRunRepository({ client: documentClient, tableName, blobStore }),
      metrics,
    ),
    configurations: new DynamoConfigurationRepository({ client: documentClient, tableName, logger }),
    users: new DynamoUserDirectory({ client: documentClient, tableName }),
    pages: new DynamoPageStore({ client: documentClient, tableName }),
    skills: new DynamoSkillRepository({ client: documentClient, tableName }),
    clock: systemClock,
    logger,
    metrics,
    settings: {
      approvalTimeoutSeconds: environment.COUNTERSIGN_APPROVAL_TIMEOUT_SECONDS,
      maxTurns: environment.COUNTERSIGN_MAX_TURNS,
      skillsMaxBytes: environment.COUNTERSIGN_SKILLS_MAX_BYTES,
      identityGroupGrants: environment.COUNTERSIGN_IDENTITY_GROUP_GRANTS,
      policyFloor: environment.COUNTERSIGN_POLICY_FLOOR,
    },
    newId: () => crypto.randomUUID(),
  };
}

/** Envelope sealing of run state under the construct's KMS key (the AWS Encryption SDK). */
export function awsSealer(): RunDependencies['sealer'] {
  sealer ??= new EnvelopeSealer({
    keyWrapping: createKmsKeyWrapping({ keyArn: lambdaEnvironment().COUNTERSIGN_SEALING_KEY_ARN }),
  });
  return sealer;
}

/** The built-in tools and the team's tools module (aliased as `countersign-team-tools`). */
export function awsTools(): RunDependencies['tools'] {
  tools ??= new ToolRegistry([...createBuiltInTools(), ...teamTools]);
  return tools;
}

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

/**
 * The run store of the functions that pause a run: it also reads a run and its owner in one
 * BatchGetItem (`DynamoRunAndUserRepository`), so only those functions bundle that read.
 */
export function awsPausingRuns(): RunDependencies['runs'] {
  const environment = lambdaEnvironment();
  pausingRuns ??= meterRunRepository(
    new DynamoRunAndUserRepository({
      client: DynamoDBDocumentClient.from(new DynamoDBClient({}), {
        marshallOptions: { removeUndefinedValues: true },
      }),
      tableName: environment.COUNTERSIGN_TABLE_NAME,
      blobStore: new S3BlobStore({
        client: new S3Client({}),
        bucketName: environment.COUNTERSIGN_OVERFLOW_BUCKET,
        kmsKeyId: environment.COUNTERSIGN_SEALING_KEY_ARN,
      }),
    }),
    awsBaseDependencies().metrics,
  );
  return pausingRuns;
}

/** Starts and resumes executions of the state machine. */
export function awsExecutions(): RunDependencies['executions'] {
  const stateMachineArn = lambdaEnvironment().COUNTERSIGN_STATE_MACHINE_ARN;
  executions ??= new StepFunctionsRunExecutions({
    client: new SFNClient({}),
    ...(stateMachineArn ? { stateMachineArn } : {}),
  });
  return executions;
}

/** Tells EventBridge a run waits for approval. */
export function awsNotifier(): RunDependencies['notifier'] {
  notifier ??= new EventBridgeRunNotifier({
    client: new EventBridgeClient({}),
    eventBusName: lambdaEnvironment().COUNTERSIGN_EVENT_BUS_NAME,
  });
  return notifier;
}
