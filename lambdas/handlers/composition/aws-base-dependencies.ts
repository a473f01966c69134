import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { surfaceTransientFaults } from '../../adapters/aws-faults.js';
import type { BlobStore } from '../../adapters/blob-store.js';
import { DynamoConfigurationRepository } from '../../adapters/dynamo/configuration-repository.js';
import { DynamoQuotaStore } from '../../adapters/dynamo/dynamo-quota-store.js';
import { DynamoPageStore } from '../../adapters/dynamo/page-store.js';
import { type DynamoRepositoryProps, DynamoRunRepository } from '../../adapters/dynamo/run-repository.js';
import { DynamoSlackUserDirectory } from '../../adapters/dynamo/slack-user-directory.js';
import { DynamoUserDirectory } from '../../adapters/dynamo/user-directory.js';
import { EmbeddedMetrics } from '../../adapters/embedded-metrics.js';
import { meterRunRepository } from '../../adapters/metered-run-repository.js';
import { DynamoSkillRepository } from '../../adapters/skills/dynamo-skill-repository.js';
import { StructuredLogger } from '../../adapters/structured-logger.js';
import { systemClock } from '../../core/ports.js';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { lambdaEnvironment, lambdaMcpHostPolicy } from '../config.js';

/** What every Lambda uses: the table's stores, the clock, the logger, the metrics and the settings. */
export type AwsBaseDependencies = Pick<
  RunDependencies,
  | 'runs'
  | 'configurations'
  | 'users'
  | 'slackUsers'
  | 'pages'
  | 'skills'
  | 'quotas'
  | 'clock'
  | 'logger'
  | 'metrics'
  | 'settings'
  | 'newId'
>;

/** The base part and the run store options it was built from: built together, once per container. */
let base: { dependencies: AwsBaseDependencies; runStoreOptions: DynamoRepositoryProps } | undefined;

/*
 * The deployed composition root is one module per part (this one, aws-sealer, aws-tools,
 * aws-models, aws-executions, aws-notifier), each importing only its own SDK client: a
 * Lambda entry imports the parts its use case reads and nothing else, so no handler
 * evaluates a client it never calls at cold start (issue #12 measured those imports as
 * most of the init time). Each part is built once per container, on first use.
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
  return base.dependencies;
}

/**
 * How the base part's run store reaches the table and the overflow bucket (with its retention),
 * for a run store of another class that must behave the same (the pausing functions').
 */
export function awsRunStoreOptions(): DynamoRepositoryProps {
  base ??= buildBaseDependencies();
  return base.runStoreOptions;
}

function buildBaseDependencies(): NonNullable<typeof base> {
  const environment = lambdaEnvironment();
  // A throttled or failing table reaches the core as `unavailable` once the SDK's retries are spent.
  const documentClient = DynamoDBDocumentClient.from(surfaceTransientFaults(new DynamoDBClient({})), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const tableName = environment.COUNTERSIGN_TABLE_NAME;
  // The bucket's own key (SSE-KMS at rest), apart from the sealing key.
  const runStoreOptions: DynamoRepositoryProps = {
    client: documentClient,
    tableName,
    blobStore: createOnDemandS3BlobStore(
      environment.COUNTERSIGN_OVERFLOW_BUCKET,
      environment.COUNTERSIGN_OVERFLOW_KEY_ARN,
    ),
    retention: {
      endedRunSeconds: environment.COUNTERSIGN_ENDED_RUN_RETENTION_SECONDS,
      decisionSeconds: environment.COUNTERSIGN_DECISION_RETENTION_SECONDS,
    },
    inboxShards: environment.COUNTERSIGN_INBOX_SHARDS,
  };
  // Service name, level and sampling come from the POWERTOOLS_* variables the construct sets.
  const logger = new StructuredLogger();
  const metrics = new EmbeddedMetrics({ logger });
  const dependencies: AwsBaseDependencies = {
    runs: meterRunRepository(new DynamoRunRepository(runStoreOptions), metrics),
    configurations: new DynamoConfigurationRepository({ client: documentClient, tableName, logger }),
    users: new DynamoUserDirectory({ client: documentClient, tableName }),
    slackUsers: new DynamoSlackUserDirectory({ client: documentClient, tableName }),
    pages: new DynamoPageStore({ client: documentClient, tableName }),
    skills: new DynamoSkillRepository({ client: documentClient, tableName }),
    quotas: new DynamoQuotaStore({ client: documentClient, tableName }),
    clock: systemClock,
    logger,
    metrics,
    settings: {
      approvalTimeoutSeconds: environment.COUNTERSIGN_APPROVAL_TIMEOUT_SECONDS,
      maxTurns: environment.COUNTERSIGN_MAX_TURNS,
      skillsMaxBytes: environment.COUNTERSIGN_SKILLS_MAX_BYTES,
      identityGroupGrants: environment.COUNTERSIGN_IDENTITY_GROUP_GRANTS,
      policyFloor: environment.COUNTERSIGN_POLICY_FLOOR,
      principalQuotas: environment.COUNTERSIGN_PRINCIPAL_QUOTAS,
      mcpHostPolicy: lambdaMcpHostPolicy(),
      ...(environment.COUNTERSIGN_MODEL_PRICES === undefined
        ? {}
        : { modelPrices: environment.COUNTERSIGN_MODEL_PRICES }),
    },
    newId: () => crypto.randomUUID(),
  };
  return { dependencies, runStoreOptions };
}

/**
 * The S3 overflow store, loaded on its first read or write: only run state over the DynamoDB
 * item limit goes there, so most containers never pay for the S3 client's import.
 */
function createOnDemandS3BlobStore(bucketName: string, kmsKeyId: string): BlobStore {
  let store: Promise<BlobStore> | undefined;
  const load = (): Promise<BlobStore> => {
    store ??= Promise.all([import('@aws-sdk/client-s3'), import('../../adapters/blob-store.js')]).then(
      ([{ S3Client }, { S3BlobStore }]) =>
        new S3BlobStore({ client: surfaceTransientFaults(new S3Client({})), bucketName, kmsKeyId }),
    );
    return store;
  };
  return {
    put: async (key, bytes) => (await load()).put(key, bytes),
    get: async (key) => (await load()).get(key),
  };
}
