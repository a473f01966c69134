import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Construct, type IConstruct } from 'constructs';
import { TABLE_LAYOUT } from '../lambdas/adapters/dynamo/table-layout.js';

/** Properties of {@link CountersignData}. */
export interface CountersignDataProps {
  /**
   * What happens to the table, the key and the buckets when they leave the stack.
   *
   * @default - RemovalPolicy.RETAIN: runs, grants and audit records outlive a stack deletion.
   */
  readonly removalPolicy?: RemovalPolicy;
}

/** Read or read-write access, the two shapes every data grant comes in. */
export type DataAccess = 'read' | 'read-write';

const TABLE_READ_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:Scan',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
];
const TABLE_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
];

/**
 * Where countersign keeps its state: one DynamoDB table (runs, sealed run state, skills,
 * pages, grants, audit), one customer-managed KMS key (table encryption, envelope sealing of
 * run state, overflow objects) and one S3 bucket for sealed state that outgrows a 400 KB item.
 *
 * Grants are written out as explicit actions on explicit ARNs (no `grantReadWriteData`):
 * the CDK helpers add `kms:ReEncrypt*`, `s3:List*` and `index/*` wildcards nobody here needs.
 *
 * @example
 * const data = new CountersignData(this, 'Data', { removalPolicy: RemovalPolicy.RETAIN });
 * data.grantTable(handler, 'read');
 */
export class CountersignData extends Construct {
  /** The single table; its key layout is `TABLE_LAYOUT`. */
  public readonly table: Table;
  /** Encrypts the table and the overflow bucket, and seals run state (envelope encryption). */
  public readonly key: Key;
  /** Sealed run state that does not fit into a DynamoDB item. */
  public readonly overflowBucket: Bucket;
  /** Server access logs of the overflow bucket. */
  public readonly accessLogBucket: Bucket;

  public constructor(scope: Construct, id: string, props: CountersignDataProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    this.key = new Key(this, 'Key', {
      description: 'countersign: table encryption, run state sealing and overflow objects',
      enableKeyRotation: true,
      removalPolicy,
    });

    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_LAYOUT.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_LAYOUT.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: this.key,
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
      removalPolicy,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE_LAYOUT.inboxIndex.name,
      partitionKey: { name: TABLE_LAYOUT.inboxIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_LAYOUT.inboxIndex.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });

    // S3 cannot deliver server access logs into an SSE-KMS bucket, so this one uses SSE-S3.
    this.accessLogBucket = new Bucket(this, 'AccessLogBucket', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(365) }],
      removalPolicy,
    });

    this.overflowBucket = new Bucket(this, 'OverflowBucket', {
      encryption: BucketEncryption.KMS,
      encryptionKey: this.key,
      bucketKeyEnabled: true,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogBucket,
      serverAccessLogsPrefix: 'overflow/',
      removalPolicy,
    });
  }

  /** The ARNs a table grant covers: the table and its one index (no `index/*` wildcard). */
  private tableResourceArns(): string[] {
    return [this.table.tableArn, `${this.table.tableArn}/index/${TABLE_LAYOUT.inboxIndex.name}`];
  }

  /**
   * Lets `grantee` read (or read and write) the table items, including the KMS permissions
   * DynamoDB needs for a customer-managed key.
   */
  public grantTable(grantee: IGrantable, access: DataAccess): Grant {
    const actions = access === 'read' ? TABLE_READ_ACTIONS : [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS];
    const grant = Grant.addToPrincipal({ grantee, actions, resourceArns: this.tableResourceArns() });
    this.grantKey(grantee, access);
    return grant;
  }

  /**
   * Lets `grantee` use the key: `read` can only decrypt (open sealed state, read the table);
   * `read-write` can also encrypt and generate data keys (seal state, write items).
   */
  public grantKey(grantee: IGrantable, access: DataAccess): Grant {
    const actions =
      access === 'read'
        ? ['kms:Decrypt', 'kms:DescribeKey']
        : ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'];
    return Grant.addToPrincipal({ grantee, actions, resourceArns: [this.key.keyArn] });
  }

  /** Lets `grantee` read (or read and write) overflow objects; the key grant comes along. */
  public grantOverflow(grantee: IGrantable, access: DataAccess): Grant {
    const actions = access === 'read' ? ['s3:GetObject'] : ['s3:GetObject', 's3:PutObject'];
    const grant = Grant.addToPrincipal({
      grantee,
      actions,
      resourceArns: [this.overflowBucket.arnForObjects('*')],
    });
    this.grantKey(grantee, access);
    return grant;
  }

  /**
   * Records, on `scope` (a role), why the object wildcard of {@link grantOverflow} stays:
   * S3 object permissions name keys, and overflow keys are minted per run at runtime.
   */
  public acknowledgeOverflowWildcard(scope: IConstruct): void {
    const bucketLogicalId = Stack.of(this).getLogicalId(this.overflowBucket.node.defaultChild as CfnBucket);
    Validations.of(scope).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketLogicalId}.Arn>/*]`,
      reason:
        'S3 object-level permissions can only be scoped by key; overflow object keys are created per run at runtime, so the grant covers the objects of this one bucket.',
    });
  }
}
