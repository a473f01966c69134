import { Validations } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { HANDLER_NAMES, type HandlerName } from '../../lib/handler-names.js';
import {
  type PolicyStatementJson,
  type SynthesizedStack,
  synthesizeTestStack,
} from './synthesize-test-stack.js';

/** Which key a statement is on, and through which service it may be used ('direct' without kms:ViaService). */
type KeyUse = `${'data' | 'sealing'} ${'direct' | 'dynamodb' | 's3'}`;

const SEAL = ['kms:Decrypt', 'kms:GenerateDataKey'];
const UNSEAL = ['kms:Decrypt'];
const DATA_READ = ['kms:Decrypt', 'kms:DescribeKey'];
const DATA_WRITE = ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'];

/** Per role: each key it may use, through what, with which actions. Written out on purpose. */
const EXPECTED_KEY_USES: Record<HandlerName, Partial<Record<KeyUse, readonly string[]>>> = {
  prepare: { 'data dynamodb': DATA_WRITE },
  'model-turn': { 'data dynamodb': DATA_WRITE, 'data s3': DATA_WRITE, 'sealing direct': SEAL },
  'await-approval': { 'data dynamodb': DATA_WRITE, 'data s3': DATA_READ, 'sealing direct': SEAL },
  'execute-tools': { 'data dynamodb': DATA_WRITE, 'data s3': DATA_WRITE, 'sealing direct': SEAL },
  'record-rejection': { 'data dynamodb': DATA_WRITE, 'data s3': DATA_WRITE, 'sealing direct': SEAL },
  'finish-run': { 'data dynamodb': DATA_WRITE },
  'mark-failed': { 'data dynamodb': DATA_WRITE },
  'mark-expired': { 'data dynamodb': DATA_WRITE },
  'api-runs': { 'data dynamodb': DATA_WRITE, 'data s3': DATA_WRITE, 'sealing direct': SEAL },
  'api-inbox': { 'data dynamodb': DATA_READ, 'sealing direct': UNSEAL },
  'api-decision': { 'data dynamodb': DATA_WRITE, 'sealing direct': UNSEAL },
  'api-admin': { 'data dynamodb': DATA_WRITE },
  // Both write their callers' quota counters (QUOTA# partitions only: countersign-permissions-data.test.ts).
  'api-generate': { 'data dynamodb': DATA_WRITE },
  'api-run-events': { 'data dynamodb': DATA_WRITE, 'data s3': DATA_READ, 'sealing direct': UNSEAL },
  // It opens the task token of a claimed decision it redelivers, and marks the decision delivered.
  'report-waiting-runs': { 'data dynamodb': DATA_WRITE, 'sealing direct': UNSEAL },
  'escalate-card': { 'data dynamodb': DATA_WRITE },
  // External runs: the approval API seals a submitted turn's state; NotifyCaller only opens it
  // (the webhook URL), and so does recording the answer (which calls an approver edited).
  'api-external': { 'data dynamodb': DATA_WRITE, 'data s3': DATA_WRITE, 'sealing direct': SEAL },
  'record-external-decision': { 'data dynamodb': DATA_WRITE, 'data s3': DATA_READ, 'sealing direct': UNSEAL },
  'notify-caller': { 'data dynamodb': DATA_READ, 'data s3': DATA_READ, 'sealing direct': UNSEAL },
};

describe('keys by purpose', () => {
  let synthesized: SynthesizedStack;
  let dataKeyId: string;
  let sealingKeyId: string;

  beforeAll(() => {
    synthesized = synthesizeTestStack();
    dataKeyId = synthesized.logicalIdOf(synthesized.stack.countersign.key);
    sealingKeyId = synthesized.logicalIdOf(synthesized.stack.countersign.sealingKey);
  });

  /** The key uses of a role's statements, by key and service. */
  function keyUsesOf(name: HandlerName): Partial<Record<KeyUse, string[]>> {
    const uses: Partial<Record<KeyUse, string[]>> = {};
    for (const statement of synthesized.statementsOf(synthesized.roleOf(name))) {
      const resource = JSON.stringify(statement.Resource);
      const key = resource.includes(`"${sealingKeyId}"`)
        ? 'sealing'
        : resource.includes(`"${dataKeyId}"`)
          ? 'data'
          : undefined;
      if (key === undefined) continue;
      const use: KeyUse = `${key} ${viaServiceOf(statement)}`;
      // A role may hold one use through several statements (the quota items' grant comes apart).
      uses[use] = [...new Set([...(uses[use] ?? []), ...[statement.Action].flat()])].sort();
    }
    return uses;
  }

  it('gives each role exactly its key uses: the sealing key to the handlers that seal or unseal', () => {
    // Act
    const uses = Object.fromEntries(HANDLER_NAMES.map((name) => [name, keyUsesOf(name)]));

    // Assess
    expect(uses).toEqual(
      Object.fromEntries(
        HANDLER_NAMES.map((name) => [
          name,
          Object.fromEntries(
            Object.entries(EXPECTED_KEY_USES[name]).map(([use, actions]) => [use, [...actions].sort()]),
          ),
        ]),
      ),
    );
  });

  it('lets exactly the twelve unsealing handlers decrypt with the sealing key', () => {
    // Act
    const decryptors = HANDLER_NAMES.filter((name) =>
      (keyUsesOf(name)['sealing direct'] ?? []).includes('kms:Decrypt'),
    ).sort();

    // Assess
    expect(decryptors).toEqual(
      [
        'await-approval',
        'execute-tools',
        'record-rejection',
        'model-turn',
        'api-inbox',
        'api-runs',
        'api-decision',
        'api-run-events',
        'api-external',
        'notify-caller',
        'record-external-decision',
        'report-waiting-runs',
      ].sort(),
    );
  });

  it('signs receipts with an ECC_NIST_P256 key of its own that only the deciding function may use, and knows of', () => {
    // Prepare
    const receiptKeyId = synthesized.logicalIdOf(synthesized.stack.countersign.receiptSigningKey);
    const onReceiptKey = (name: HandlerName) =>
      synthesized
        .statementsOf(synthesized.roleOf(name))
        .filter((statement) => JSON.stringify(statement.Resource).includes(`"${receiptKeyId}"`))
        .flatMap((statement) => [statement.Action].flat());
    const functions = Object.values(synthesized.template.findResources('AWS::Lambda::Function')) as Array<{
      Properties: { Role: unknown; Environment?: { Variables?: Record<string, unknown> } };
    }>;

    // Act
    const uses = Object.fromEntries(HANDLER_NAMES.map((name) => [name, onReceiptKey(name)]));
    const told = functions.filter(
      (resource) => resource.Properties.Environment?.Variables?.COUNTERSIGN_RECEIPT_KEY_ARN,
    );

    // Assess
    synthesized.template.hasResourceProperties('AWS::KMS::Key', {
      KeySpec: 'ECC_NIST_P256',
      KeyUsage: 'SIGN_VERIFY',
    });
    expect(uses).toEqual(
      Object.fromEntries(HANDLER_NAMES.map((name) => [name, name === 'api-decision' ? ['kms:Sign'] : []])),
    );
    expect(synthesized.rolesGranted('kms:Sign')).toEqual([synthesized.roleOf('api-decision')]);
    expect(synthesized.rolesGranted('kms:GetPublicKey')).toEqual([]);
    expect(told).toHaveLength(1);
    expect(told[0]?.Properties.Role).toEqual({ 'Fn::GetAtt': [synthesized.roleOf('api-decision'), 'Arn'] });
    expect(told[0]?.Properties.Environment?.Variables?.COUNTERSIGN_RECEIPT_KEY_ARN).toEqual({
      'Fn::GetAtt': [receiptKeyId, 'Arn'],
    });
  });

  it('never grants the data key without kms:ViaService, so no role can decrypt with it directly', () => {
    // Act
    const direct = HANDLER_NAMES.filter((name) => keyUsesOf(name)['data direct'] !== undefined);

    // Assess
    expect(direct).toEqual([]);
  });

  it('keeps the table and the overflow bucket on the data key, and tells the sealer the sealing key', () => {
    // Act
    const tableKey = Object.values(synthesized.template.findResources('AWS::DynamoDB::Table'))[0] as {
      Properties: { SSESpecification: { KMSMasterKeyId: unknown } };
    };

    // Assess
    expect(tableKey.Properties.SSESpecification.KMSMasterKeyId).toEqual({ 'Fn::GetAtt': [dataKeyId, 'Arn'] });
    synthesized.template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          Match.objectLike({
            ServerSideEncryptionByDefault: {
              SSEAlgorithm: 'aws:kms',
              KMSMasterKeyID: { 'Fn::GetAtt': [dataKeyId, 'Arn'] },
            },
          }),
        ],
      },
    });
    const functions = Object.values(synthesized.template.findResources('AWS::Lambda::Function')) as Array<{
      Properties: { Environment?: { Variables?: Record<string, unknown> } };
    }>;
    const handlers = functions.filter(
      (resource) => resource.Properties.Environment?.Variables?.COUNTERSIGN_TABLE_NAME,
    );
    expect(handlers).toHaveLength(HANDLER_NAMES.length);
    for (const handler of handlers) {
      expect(handler.Properties.Environment?.Variables).toMatchObject({
        COUNTERSIGN_SEALING_KEY_ARN: { 'Fn::GetAtt': [sealingKeyId, 'Arn'] },
        COUNTERSIGN_OVERFLOW_KEY_ARN: { 'Fn::GetAtt': [dataKeyId, 'Arn'] },
      });
    }
  });

  it('acknowledges the Lambda invocation wildcards of exactly the ten functions the state machine invokes', () => {
    // Prepare
    const invoked: HandlerName[] = [
      'prepare',
      'model-turn',
      'await-approval',
      'execute-tools',
      'record-rejection',
      'finish-run',
      'mark-failed',
      'mark-expired',
      'record-external-decision',
      'notify-caller',
    ];
    const invokeStatements = synthesized
      .statementsOf(synthesized.stateMachineRole())
      .filter((statement) => statement.Action === 'lambda:InvokeFunction');

    // Act
    const acknowledged = acknowledgedRulesOf(synthesized.stack.countersign.stateMachine.role).filter((id) =>
      id.startsWith('AwsSolutions-IAM5[Resource::<'),
    );

    // Assess
    expect(invokeStatements).toHaveLength(invoked.length);
    expect(acknowledged.sort()).toEqual(
      invoked
        .map(
          (name) =>
            `AwsSolutions-IAM5[Resource::<${synthesized.logicalIdOf(synthesized.stack.countersign.functions[name])}.Arn>:*]`,
        )
        .sort(),
    );
  });

  it('acknowledges the overflow object wildcard only on roles granted overflow objects', () => {
    // Act
    const acknowledging = HANDLER_NAMES.filter((name) => {
      const role = synthesized.stack.countersign.functions[name].role;
      return role !== undefined && acknowledgedRulesOf(role).some((id) => id.includes('OverflowBucket'));
    }).sort();
    const granted = HANDLER_NAMES.filter((name) =>
      synthesized.actionsOf(synthesized.roleOf(name)).has('s3:GetObject'),
    ).sort();

    // Assess
    expect(acknowledging).toEqual(granted);
  });
});

function viaServiceOf(statement: PolicyStatementJson): 'direct' | 'dynamodb' | 's3' {
  const condition = JSON.stringify((statement as { Condition?: unknown }).Condition ?? {});
  if (condition.includes('"dynamodb.')) return 'dynamodb';
  if (condition.includes('"s3.')) return 's3';
  return 'direct';
}

function acknowledgedRulesOf(construct: IConstruct): string[] {
  return (
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.keys(entry.data as Record<string, string>))
      // The recorded id may carry a namespace before the rule id.
      .map((id) => id.slice(Math.max(0, id.indexOf('AwsSolutions-'))))
  );
}
