import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import type {
  LeaseOutcome,
  QuotaStore,
  StartedRun,
  TakenLease,
  WindowOutcome,
} from '../../core/quotas/quota-store.js';
import { isConditionalCheckFailed } from './item-codec.js';
import type { DynamoTableProps } from './run-repository.js';

const { partitionKey: PK, sortKey: SK, timeToLiveAttribute: REMOVE_AFTER } = TABLE_LAYOUT;
/** Kept an hour past its end: TTL removes it (the local sweep does, for dynalite), nothing reads it by then. */
const KEEP_AFTER_END_SECONDS = 3_600;
/** A slot another request took between the read and the write is looked for again, this often. */
const LEASE_ATTEMPTS = 3;

/**
 * `QuotaStore` on DynamoDB, in the principal's partition `QUOTA#<user id>`:
 * - `WINDOW#<counter>#<window start>`: a count, raised by a conditional `ADD` below the limit;
 * - `STREAM#<slot>`: a lease (`leaseId`, `leaseEndsAt`), taken by a conditional put on a slot
 *   that is empty or whose lease ended;
 * - `STARTED#<run id>`: a run the principal started, with its configuration.
 * Every item carries `removeAfter` (TTL), so an idle principal leaves nothing behind.
 *
 * @example
 * const quotas = new DynamoQuotaStore({ client, tableName });
 * await quotas.countInWindow({ principalId: 'ana', counter: 'runs-started', windowStartSeconds, windowSeconds: 60, limit: 20 });
 */
export class DynamoQuotaStore implements QuotaStore {
  public constructor(private readonly table: DynamoTableProps) {}

  public async countInWindow(request: Parameters<QuotaStore['countInWindow']>[0]): Promise<WindowOutcome> {
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: {
            [PK]: partitionOf(request.principalId),
            [SK]: `WINDOW#${request.counter}#${request.windowStartSeconds}`,
          },
          UpdateExpression: 'ADD #count :one SET #removeAfter = :removeAfter',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          ExpressionAttributeNames: { '#count': 'count', '#removeAfter': REMOVE_AFTER },
          ExpressionAttributeValues: {
            ':one': 1,
            ':limit': request.limit,
            ':removeAfter': request.windowStartSeconds + request.windowSeconds + KEEP_AFTER_END_SECONDS,
          },
        }),
      );
      return { kind: 'counted' };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { kind: 'over-limit' };
      throw error;
    }
  }

  public async takeLease(request: Parameters<QuotaStore['takeLease']>[0]): Promise<LeaseOutcome> {
    let freeAtSeconds = request.nowSeconds;
    for (let attempt = 0; attempt < LEASE_ATTEMPTS; attempt += 1) {
      const held = await this.readLeases(request.principalId);
      const slot = Array.from({ length: request.limit }, (_unused, index) => index).find((index) => {
        const endsAt = held.get(index);
        return endsAt === undefined || endsAt <= request.nowSeconds;
      });
      if (slot === undefined) {
        const ends = [...held.entries()]
          .filter(([index]) => index < request.limit)
          .map(([, endsAt]) => endsAt);
        freeAtSeconds = Math.min(...ends);
        return { kind: 'over-limit', freeAtSeconds };
      }
      try {
        await this.table.client.send(
          new PutCommand({
            TableName: this.table.tableName,
            Item: {
              [PK]: partitionOf(request.principalId),
              [SK]: slotKey(slot),
              leaseId: request.leaseId,
              leaseEndsAt: request.endsAtSeconds,
              [REMOVE_AFTER]: request.endsAtSeconds + KEEP_AFTER_END_SECONDS,
            },
            ConditionExpression: 'attribute_not_exists(#pk) OR #leaseEndsAt <= :now',
            ExpressionAttributeNames: { '#pk': PK, '#leaseEndsAt': 'leaseEndsAt' },
            ExpressionAttributeValues: { ':now': request.nowSeconds },
          }),
        );
        return { kind: 'taken', lease: { principalId: request.principalId, slot, leaseId: request.leaseId } };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    }
    // Every attempt lost its slot to a concurrent request: the principal is at its limit now.
    return { kind: 'over-limit', freeAtSeconds: freeAtSeconds + 1 };
  }

  public async releaseLease(lease: TakenLease): Promise<void> {
    try {
      await this.table.client.send(
        new DeleteCommand({
          TableName: this.table.tableName,
          Key: { [PK]: partitionOf(lease.principalId), [SK]: slotKey(lease.slot) },
          ConditionExpression: 'leaseId = :leaseId',
          ExpressionAttributeValues: { ':leaseId': lease.leaseId },
        }),
      );
    } catch (error) {
      // The lease ended and another stream took the slot since: it is that stream's now.
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  public async recordStartedRun(
    principalId: string,
    run: StartedRun,
    removeAfterSeconds: number,
  ): Promise<void> {
    await this.table.client.send(
      new PutCommand({
        TableName: this.table.tableName,
        Item: {
          [PK]: partitionOf(principalId),
          [SK]: `STARTED#${run.runId}`,
          configurationId: run.configurationId,
          [REMOVE_AFTER]: removeAfterSeconds,
        },
      }),
    );
  }

  public async listStartedRuns(principalId: string): Promise<StartedRun[]> {
    const items = await this.queryPrefix(principalId, 'STARTED#');
    return items.map((item) => ({
      runId: String(item[SK]).slice('STARTED#'.length),
      configurationId: String(item.configurationId),
    }));
  }

  public async forgetStartedRuns(principalId: string, runIds: readonly string[]): Promise<void> {
    for (const runId of runIds) {
      await this.table.client.send(
        new DeleteCommand({
          TableName: this.table.tableName,
          Key: { [PK]: partitionOf(principalId), [SK]: `STARTED#${runId}` },
        }),
      );
    }
  }

  /** The slots of the principal's leases and when each lease ends. */
  private async readLeases(principalId: string): Promise<Map<number, number>> {
    const items = await this.queryPrefix(principalId, 'STREAM#');
    return new Map(
      items.map((item) => [Number(String(item[SK]).slice('STREAM#'.length)), Number(item.leaseEndsAt)]),
    );
  }

  private async queryPrefix(principalId: string, prefix: string): Promise<Array<Record<string, unknown>>> {
    const items: Array<Record<string, unknown>> = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.table.client.send(
        new QueryCommand({
          TableName: this.table.tableName,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: { ':pk': partitionOf(principalId), ':prefix': prefix },
          ConsistentRead: true,
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return items;
  }
}

function partitionOf(principalId: string): string {
  return `${TABLE_LAYOUT.quotaPartitionPrefix}${principalId}`;
}

function slotKey(slot: number): string {
  return `STREAM#${String(slot).padStart(4, '0')}`;
}
