import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Construct, type IConstruct } from 'constructs';
import { TABLE_LAYOUT } from '../lambdas/contract/table-layout.js';

/** Properties of {@link CountersignData}. */
export interface CountersignDataProps {
  /**
   * What happens to the table, the key and the buckets when they leave the stack.
   *
   * @default - RemovalPolicy.RETAIN: runs, grants and audit records outlive a stack deletion.
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * How long an overflow object is kept after it was written; S3 then removes it (a lifecycle
   * rule). Run items expire by DynamoDB TTL on `TABLE_LAYOUT.timeToLiveAttribute`.
   *
   * @default - kept until deleted
   */
  readonly overflowExpiration?: Duration;
}

/** Read or read-write access, the two shapes of an overflow grant. */
export type DataAccess = 'read' | 'read-write';

/** The item-level DynamoDB actions a handler may be granted; nothing table-wide (no Scan, no DescribeTable). */
export type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem';

/** What a handler does with sealed state: `unseal` decrypts it, `seal` also wraps new data keys. */
export type SealingAccess = 'seal' | 'unseal';

const TABLE_WRITE_ACTIONS: readonly TableAction[] = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
];

/** What a table grant covers beyond the item actions on the table itself. */
export interface TableGrantOptions {
  /** Also Query the inbox index (only the inbox and the waiting-runs probe read it). */
  readonly inboxIndex?: boolean;
  /** Also Query the history index (what a person decided and started: the runs function). */
  readonly historyIndex?: boolean;
}

/**
 * Where countersign keeps its state: one DynamoDB table (runs, sealed run state, skills,
 * pages, grants, audit), two customer-managed KMS keys by purpose (the data key encrypts the
 * table and the overflow objects at rest; the sealing key wraps the envelope keys of sealed run
 * state, cards and task tokens), an asymmetric key that signs receipts, and one S3 bucket for
 * sealed state that outgrows a 400 KB item.
 *
 * The data key is usable only through DynamoDB and S3 (`kms:ViaService`), so a role that may
 * read the table cannot decrypt anything with it directly; only the handlers that unseal may use
 * the sealing key.
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
  /** Encrypts the table and the overflow bucket at rest; usable through DynamoDB and S3 only. */
  public readonly key: Key;
  /** Wraps the data keys of sealed run state, approval cards and task tokens (envelope encryption). */
  public readonly sealingKey: Key;
  /**
   * Signs the entries of run receipts (docs/receipts.md): an asymmetric `ECC_NIST_P256` key for
   * `kms:Sign` with `ECDSA_SHA_256`, which only the deciding function may use.
   */
  public readonly receiptSigningKey: Key;
  /** Sealed run state that does not fit into a DynamoDB item. */
  public readonly overflowBucket: Bucket;
  /** Server access logs of the overflow bucket. */
  public readonly accessLogBucket: Bucket;

  public constructor(scope: Construct, id: string, props: CountersignDataProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    this.key = new Key(this, 'Key', {
      description: 'countersign: table and overflow bucket encryption at rest',
      enableKeyRotation: true,
      removalPolicy,
    });
    this.sealingKey = new Key(this, 'SealingKey', {
      description: 'countersign: sealing of run state, approval cards and task tokens',
      enableKeyRotation: true,
      removalPolicy,
    });

    // Asymmetric: KMS cannot rotate it; a new key would sign new entries under its own ARN.
    this.receiptSigningKey = new Key(this, 'ReceiptSigningKey', {
      description: 'countersign: signs run receipt entries (approvals and decisions)',
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
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
      // Ended runs and their closed cards carry a removal time (retention, docs/runbook.md).
      timeToLiveAttribute: TABLE_LAYOUT.timeToLiveAttribute,
      removalPolicy,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE_LAYOUT.inboxIndex.name,
      partitionKey: { name: TABLE_LAYOUT.inboxIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_LAYOUT.inboxIndex.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
    // Only what a history list shows: never a run's sealed state or a decision's arguments.
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE_LAYOUT.historyIndex.name,
      partitionKey: { name: TABLE_LAYOUT.historyIndex.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_LAYOUT.historyIndex.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: [...TABLE_LAYOUT.historyIndex.projectedAttributes],
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
      lifecycleRules:
        props.overflowExpiration === undefined
          ? []
          : [{ id: 'ExpireOverflow', expiration: props.overflowExpiration }],
      removalPolicy,
    });
  }

  /**
   * Lets `grantee` take exactly `actions` on the table's items (and Query the inbox index when
   * asked), with the data-key permissions DynamoDB needs for a customer managed key: decrypt to
   * read, also encrypt and generate data keys to write, and only through DynamoDB.
   */
  public grantTableActions(
    grantee: IGrantable,
    actions: readonly TableAction[],
    options: TableGrantOptions = {},
  ): Grant {
    if (actions.length === 0 && !options.inboxIndex && !options.historyIndex) {
      throw new Error('CountersignData.grantTableActions: no actions; grant at least one table action.');
    }
    const tableActions = [...new Set(actions)];
    const grants: Grant[] = [];
    if (tableActions.length > 0) {
      grants.push(
        Grant.addToPrincipal({ grantee, actions: tableActions, resourceArns: [this.table.tableArn] }),
      );
    }
    for (const index of [
      ...(options.inboxIndex ? [TABLE_LAYOUT.inboxIndex.name] : []),
      ...(options.historyIndex ? [TABLE_LAYOUT.historyIndex.name] : []),
    ]) {
      grants.push(
        Grant.addToPrincipal({
          grantee,
          actions: ['dynamodb:Query'],
          resourceArns: [`${this.table.tableArn}/index/${index}`],
        }),
      );
    }
    const writes = tableActions.some((action) => TABLE_WRITE_ACTIONS.includes(action));
    grants.push(this.grantDataKey(grantee, writes ? 'read-write' : 'read', 'dynamodb'));
    return grants.reduce((combined, next) => combined.combine(next));
  }

  /**
   * Lets `grantee` act on the per-principal quota counters only: items whose partition key
   * starts with `QUOTA#` (an IAM condition on `dynamodb:LeadingKeys`), so a function that
   * otherwise only reads (the events endpoint) cannot write any other item.
   */
  public grantQuotaItemActions(grantee: IGrantable, actions: readonly TableAction[]): Grant {
    const itemActions = Grant.addToPrincipal({
      grantee,
      actions: [...new Set(actions)],
      resourceArns: [this.table.tableArn],
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TABLE_LAYOUT.quotaPartitionPrefix}*`] },
      },
    });
    const writes = actions.some((action) => TABLE_WRITE_ACTIONS.includes(action));
    return itemActions.combine(this.grantDataKey(grantee, writes ? 'read-write' : 'read', 'dynamodb'));
  }

  /** Lets `grantee` read the table (items and both indexes) and decrypt it, e.g. a reporting job. */
  public grantTableRead(grantee: IGrantable): Grant {
    return this.grantTableActions(grantee, ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'], {
      inboxIndex: true,
      historyIndex: true,
    });
  }

  /**
   * The data key through one service: `read` decrypts, `read-write` also encrypts and
   * generates data keys. `kms:ViaService` keeps the grant from opening anything directly.
   */
  private grantDataKey(grantee: IGrantable, access: DataAccess, service: 'dynamodb' | 's3'): Grant {
    const actions =
      access === 'read'
        ? ['kms:Decrypt', 'kms:DescribeKey']
        : ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'];
    return Grant.addToPrincipal({
      grantee,
      actions,
      resourceArns: [this.key.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `${service}.${Stack.of(this).region}.amazonaws.com` } },
    });
  }

  /**
   * Lets `grantee` use the sealing key: `unseal` decrypts sealed state (kms:Decrypt), `seal`
   * also wraps new data keys (kms:GenerateDataKey, what the Encryption SDK's KMS keyring calls).
   */
  public grantSealing(grantee: IGrantable, access: SealingAccess): Grant {
    const actions = access === 'unseal' ? ['kms:Decrypt'] : ['kms:Decrypt', 'kms:GenerateDataKey'];
    return Grant.addToPrincipal({ grantee, actions, resourceArns: [this.sealingKey.keyArn] });
  }

  /** Lets `grantee` sign receipt entries with the receipt key (kms:Sign and nothing else). */
  public grantReceiptSigning(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['kms:Sign'],
      resourceArns: [this.receiptSigningKey.keyArn],
    });
  }

  /** Lets `grantee` read (or read and write) overflow objects; the data key comes along, through S3. */
  public grantOverflow(grantee: IGrantable, access: DataAccess): Grant {
    const actions = access === 'read' ? ['s3:GetObject'] : ['s3:GetObject', 's3:PutObject'];
    const grant = Grant.addToPrincipal({
      grantee,
      actions,
      resourceArns: [this.overflowBucket.arnForObjects('*')],
    });
    this.grantDataKey(grantee, access, 's3');
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
