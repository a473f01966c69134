import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { CountersignError } from '../../core/errors.js';
import {
  type ClientKeyClaim,
  type ClientKeyOutcome,
  clientKeyClaimSchema,
  type ExecutionReport,
  type ExternalRunStore,
  executionReportSchema,
  type ReportOutcome,
  readableClientKeyClaimSchema,
  readableExecutionReportSchema,
} from '../../core/external-runs/external-run-store.js';
import { type Clock, systemClock } from '../../core/ports.js';
import type { ItemKey } from './item-codec.js';
import { parseItem, withoutUndefined } from './item-codec.js';
import { putIfAbsent } from './put-if-absent.js';

/**
 * The items of external runs (docs/external-agents.md), in the one table:
 *
 * | item             | pk                   | sk                          | attributes        |
 * |------------------|----------------------|-----------------------------|-------------------|
 * | client key       | `CLIENT#<client id>` | `KEY#<client key>`          | ClientKeyClaim    |
 * | execution report | `RUN#<runId>`        | `REPORT#<call index, 3 digits>` | ExecutionReport |
 *
 * A client key lives as long as its run can (its approval window and the ended-run retention),
 * so a retry within that time finds its run; a report lives as long as the ended run.
 */
export interface DynamoExternalRunStoreProps {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** How long after it is written an item may be removed (DynamoDB TTL); undefined keeps it. */
  readonly retentionSeconds?: number;
  /** @default - the system clock */
  readonly clock?: Clock;
}

const REPORT_SORT_PREFIX = 'REPORT#';

const clientKeyItemKey = (owner: string, clientKey: string): ItemKey => ({
  [TABLE_LAYOUT.partitionKey]: `CLIENT#${owner}`,
  [TABLE_LAYOUT.sortKey]: `KEY#${clientKey}`,
});
const reportItemKey = (runId: string, index: number): ItemKey => ({
  [TABLE_LAYOUT.partitionKey]: `RUN#${runId}`,
  [TABLE_LAYOUT.sortKey]: `${REPORT_SORT_PREFIX}${String(index).padStart(3, '0')}`,
});

/**
 * `ExternalRunStore` on DynamoDB (dynalite locally): each write a conditional put, each read
 * consistent, a run's reports one Query of its partition.
 *
 * @example
 * const store = new DynamoExternalRunStore({ client, tableName });
 * await store.claimClientKey(claim); // { kind: 'claimed' }
 */
export class DynamoExternalRunStore implements ExternalRunStore {
  private readonly clock: Clock;

  public constructor(private readonly props: DynamoExternalRunStoreProps) {
    this.clock = props.clock ?? systemClock;
  }

  public async claimClientKey(claim: ClientKeyClaim): Promise<ClientKeyOutcome> {
    const parsed = clientKeyClaimSchema.parse(claim);
    const claimed = await putIfAbsent(this.props.client, this.props.tableName, {
      ...parsed,
      ...this.removal(),
      ...clientKeyItemKey(parsed.owner, parsed.clientKey),
    });
    if (claimed) return { kind: 'claimed' };
    const existing = await this.getClientKey(parsed.owner, parsed.clientKey);
    if (!existing) throw missingWinner();
    return { kind: 'exists', existing };
  }

  public async getClientKey(owner: string, clientKey: string): Promise<ClientKeyClaim | undefined> {
    const item = await this.read(clientKeyItemKey(owner, clientKey));
    return item ? parseItem(readableClientKeyClaimSchema, item, 'client key') : undefined;
  }

  public async recordExecution(report: ExecutionReport): Promise<ReportOutcome> {
    const parsed = executionReportSchema.parse(report);
    const recorded = await putIfAbsent(this.props.client, this.props.tableName, {
      ...withoutUndefined(parsed),
      ...this.removal(),
      ...reportItemKey(parsed.runId, parsed.index),
    });
    if (recorded) return { kind: 'recorded' };
    const item = await this.read(reportItemKey(parsed.runId, parsed.index));
    if (!item) throw missingWinner();
    return { kind: 'exists', existing: parseItem(readableExecutionReportSchema, item, 'execution report') };
  }

  public async listExecutions(runId: string): Promise<ExecutionReport[]> {
    const { Items: items = [] } = await this.props.client.send(
      new QueryCommand({
        TableName: this.props.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': TABLE_LAYOUT.partitionKey, '#sk': TABLE_LAYOUT.sortKey },
        ExpressionAttributeValues: { ':pk': `RUN#${runId}`, ':prefix': REPORT_SORT_PREFIX },
        ConsistentRead: true,
      }),
    );
    return items.map((item) => parseItem(readableExecutionReportSchema, item, 'execution report'));
  }

  private async read(key: ItemKey): Promise<Record<string, unknown> | undefined> {
    const { Item: item } = await this.props.client.send(
      new GetCommand({ TableName: this.props.tableName, Key: key, ConsistentRead: true }),
    );
    return item;
  }

  private removal(): Record<string, number> {
    if (this.props.retentionSeconds === undefined) return {};
    const removeAfter = Math.floor(this.clock.now().getTime() / 1000) + this.props.retentionSeconds;
    return { [TABLE_LAYOUT.timeToLiveAttribute]: removeAfter };
  }
}

/** Neither item is ever deleted before its TTL, so a failed put always has a winner to read. */
function missingWinner(): CountersignError {
  return new CountersignError('internal', 'A conditional put failed but no item was found.', {
    expose: false,
  });
}
