import { RemovalPolicy } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, routeKeyOf, transportOf } from '../../lambdas/contract/routes.js';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import { HANDLER_NAMES } from '../../lib/handler-names.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

interface LambdaProperties {
  Runtime: string;
  Architectures: string[];
  TracingConfig: { Mode: string };
  Handler: string;
  LoggingConfig: { LogGroup: unknown };
  Environment: { Variables: Record<string, unknown> };
}

const COMMON_VARIABLES = [
  'COUNTERSIGN_TABLE_NAME',
  'COUNTERSIGN_SEALING_KEY_ARN',
  'COUNTERSIGN_OVERFLOW_KEY_ARN',
  'COUNTERSIGN_OVERFLOW_BUCKET',
  'COUNTERSIGN_APPROVAL_TIMEOUT_SECONDS',
  'COUNTERSIGN_MODEL_PROVIDER',
  'COUNTERSIGN_BEDROCK_MODEL_ID',
  'COUNTERSIGN_SKILLS_MAX_BYTES',
  'COUNTERSIGN_MAX_TURNS',
];

describe('Countersign resources', () => {
  let synthesized: SynthesizedStack;
  let functions: Array<[string, LambdaProperties]>;
  beforeAll(() => {
    synthesized = synthesizeTestStack();
    functions = Object.entries(synthesized.template.findResources('AWS::Lambda::Function')).map(
      ([logicalId, resource]) => [logicalId, (resource as { Properties: LambdaProperties }).Properties],
    );
  });

  it('keeps data in one on-demand table with point-in-time recovery, the customer key, the inbox index and the history index', () => {
    // Act
    const tables = synthesized.template.findResources('AWS::DynamoDB::Table');

    // Assess
    expect(Object.keys(tables)).toHaveLength(1);
    synthesized.template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({
        KeySchema: [
          { AttributeName: TABLE_LAYOUT.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE_LAYOUT.sortKey, KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: {
          SSEEnabled: true,
          SSEType: 'KMS',
          KMSMasterKeyId: {
            'Fn::GetAtt': [synthesized.logicalIdOf(synthesized.stack.countersign.key), 'Arn'],
          },
        },
        GlobalSecondaryIndexes: [
          {
            IndexName: TABLE_LAYOUT.inboxIndex.name,
            KeySchema: [
              { AttributeName: TABLE_LAYOUT.inboxIndex.partitionKey, KeyType: 'HASH' },
              { AttributeName: TABLE_LAYOUT.inboxIndex.sortKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
          {
            IndexName: TABLE_LAYOUT.historyIndex.name,
            KeySchema: [
              { AttributeName: TABLE_LAYOUT.historyIndex.partitionKey, KeyType: 'HASH' },
              { AttributeName: TABLE_LAYOUT.historyIndex.sortKey, KeyType: 'RANGE' },
            ],
            // Only what a history list shows: never a run's sealed state or a decision's arguments.
            Projection: {
              ProjectionType: 'INCLUDE',
              NonKeyAttributes: [...TABLE_LAYOUT.historyIndex.projectedAttributes],
            },
          },
        ],
      }),
    });
  });

  it('rotates its three symmetric KMS keys (data, sealing, alarm topic) and retains the receipt key, which KMS cannot rotate', () => {
    // Prepare
    const receiptKeyId = synthesized.logicalIdOf(synthesized.stack.countersign.receiptSigningKey);

    // Act
    const { [receiptKeyId]: receiptKey, ...keys } = synthesized.template.findResources('AWS::KMS::Key');

    // Assess
    expect(Object.keys(keys)).toHaveLength(3);
    for (const key of Object.values(keys)) {
      expect(key).toMatchObject({ DeletionPolicy: 'Retain', Properties: { EnableKeyRotation: true } });
    }
    expect(receiptKey).toMatchObject({
      DeletionPolicy: 'Retain',
      Properties: { KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' },
    });
    expect(
      (receiptKey as { Properties: Record<string, unknown> }).Properties.EnableKeyRotation,
    ).toBeUndefined();
  });

  it('encrypts the overflow bucket with the key, blocks public access and refuses plain HTTP', () => {
    // Prepare
    const bucketLogicalId = synthesized.logicalIdOf(synthesized.stack.countersign.overflowBucket);

    // Act
    const bucket = synthesized.template.toJSON().Resources[bucketLogicalId];

    // Assess
    expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0]).toMatchObject({
      ServerSideEncryptionByDefault: {
        SSEAlgorithm: 'aws:kms',
        KMSMasterKeyID: { 'Fn::GetAtt': [synthesized.logicalIdOf(synthesized.stack.countersign.key), 'Arn'] },
      },
    });
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    synthesized.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketLogicalId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('applies the removal policy prop to data', () => {
    // Prepare
    const destroyable = synthesizeTestStack({ countersign: { removalPolicy: RemovalPolicy.DESTROY } });

    // Act
    const table = Object.values(destroyable.template.findResources('AWS::DynamoDB::Table'))[0];

    // Assess
    expect(table?.DeletionPolicy).toBe('Delete');
    expect(table?.Properties.DeletionProtectionEnabled).toBe(false);
    destroyable.template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Delete' });
  });

  it('runs one arm64 function per handler on the newest Node.js runtime, traced', () => {
    // Act
    const runtimes = new Set(functions.map(([, properties]) => properties.Runtime));

    // Assess
    expect(functions).toHaveLength(HANDLER_NAMES.length);
    expect(runtimes).toEqual(new Set(['nodejs24.x']));
    for (const [logicalId, properties] of functions) {
      expect(properties.Architectures, logicalId).toEqual(['arm64']);
      expect(properties.TracingConfig, logicalId).toEqual({ Mode: 'Active' });
      expect(properties.Handler, logicalId).toBe('index.handler');
    }
  });

  it('gives every function its own log group with the retention prop', () => {
    // Prepare
    const retained = synthesizeTestStack({ countersign: { logRetention: RetentionDays.ONE_WEEK } });

    // Act
    const defaultLogGroups = synthesized.template.findResources('AWS::Logs::LogGroup');
    const logGroupReferences = new Set(
      functions.map(([, properties]) => JSON.stringify(properties.LoggingConfig.LogGroup)),
    );

    // Assess
    expect(logGroupReferences.size).toBe(HANDLER_NAMES.length);
    for (const logGroup of Object.values(defaultLogGroups)) {
      expect(logGroup.Properties.RetentionInDays).toBe(30);
    }
    for (const logGroup of Object.values(retained.template.findResources('AWS::Logs::LogGroup'))) {
      expect(logGroup.Properties.RetentionInDays).toBe(7);
    }
  });

  it('passes the settings every handler reads, and the state machine ARN to the two that start runs only', () => {
    // Prepare
    const configured = synthesizeTestStack({
      countersign: { skillsMaxBytes: 16000, maxTurns: 20, inboxShards: 8 },
    });
    const startersIds = (['api-runs', 'api-external'] as const).map((name) =>
      configured.logicalIdOf(configured.stack.countersign.functions[name]),
    );

    // Act
    const variables = Object.entries(configured.template.findResources('AWS::Lambda::Function')).map(
      ([logicalId, resource]) => [logicalId, resource.Properties.Environment.Variables] as const,
    );

    // Assess
    for (const [logicalId, environment] of variables) {
      expect(Object.keys(environment), logicalId).toEqual(expect.arrayContaining(COMMON_VARIABLES));
      expect(environment.COUNTERSIGN_SKILLS_MAX_BYTES).toBe('16000');
      expect(environment.COUNTERSIGN_MAX_TURNS).toBe('20');
      expect(environment.COUNTERSIGN_INBOX_SHARDS).toBe('8');
      expect(environment.COUNTERSIGN_APPROVAL_TIMEOUT_SECONDS).toBe('604800');
      expect(environment.COUNTERSIGN_MODEL_PROVIDER).toBe('bedrock');
      expect('COUNTERSIGN_STATE_MACHINE_ARN' in environment, logicalId).toBe(startersIds.includes(logicalId));
    }
  });

  it("routes exactly the manifest's http-api routes, each to its function, and logs access on the default stage", () => {
    // Prepare
    const template = synthesized.template;
    const integrations = template.findResources('AWS::ApiGatewayV2::Integration');
    const functionIdByIntegration = new Map(
      Object.entries(integrations).map(([logicalId, resource]) => [
        logicalId,
        (resource as { Properties: { IntegrationUri: { 'Fn::GetAtt': [string, string] } } }).Properties
          .IntegrationUri['Fn::GetAtt'][0],
      ]),
    );

    // Act
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map((route) => {
      const properties = route.Properties as {
        RouteKey: string;
        Target: { 'Fn::Join': [string, unknown[]] };
      };
      const integration = properties.Target['Fn::Join'][1].find(
        (part): part is { Ref: string } => typeof part === 'object' && part !== null && 'Ref' in part,
      );
      return [properties.RouteKey, functionIdByIntegration.get(integration?.Ref ?? '')] as const;
    });

    // Assess
    // Without channels, a channel's route does not exist (test/infra/channels.test.ts has them).
    const expected = ROUTES.filter(
      (route) => transportOf(route) === 'http-api' && route.function !== 'slack-interactions',
    ).map(
      (route) =>
        [
          routeKeyOf(route),
          synthesized.logicalIdOf(
            synthesized.stack.countersign.functions[
              route.function as Exclude<typeof route.function, 'slack-interactions'>
            ],
          ),
        ] as const,
    );
    expect([...routes].sort()).toEqual([...expected].sort());
    // The admin routes are listed one by one: no greedy route hands API Gateway's 404 to a Lambda.
    expect(routes.map(([routeKey]) => routeKey).filter((routeKey) => routeKey.includes('+}'))).toEqual([]);
    synthesized.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
    });
  });
});
