import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { type ChainEntry, chainEntrySchema } from '../../core/receipts/chain-entry.js';
import type { AppendOutcome, ReceiptChainStore } from '../../core/receipts/receipt-ports.js';
import { putIfAbsent } from './put-if-absent.js';
import { CHAIN_ENTRY_SORT_PREFIX, chainEntryItemKey, runItemKey } from './run-item-keys.js';

/**
 * The receipt chains on DynamoDB: one item per entry in the run's partition, sort key
 * `CHAIN#<sequence>` (zero-padded, so a Query reads them in order). The append is a conditional
 * put: the first writer of a sequence wins. Kept like decision records (the same retention).
 *
 * @example
 * const chain = new DynamoReceiptChainStore({ client, tableName });
 * const entries = await chain.readChain(runId);
 */
export class DynamoReceiptChainStore implements ReceiptChainStore {
  public constructor(
    private readonly props: {
      readonly client: DynamoDBDocumentClient;
      readonly tableName: string;
      /** The `removeAfter` stamp of a new entry (decision retention); undefined keeps it forever. */
      readonly removeAfter?: () => number | undefined;
    },
  ) {}

  public async readEntries(runId: string): Promise<unknown[]> {
    const entries: unknown[] = [];
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await this.props.client.send(
        new QueryCommand({
          TableName: this.props.tableName,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': TABLE_LAYOUT.partitionKey, '#sk': TABLE_LAYOUT.sortKey },
          ExpressionAttributeValues: {
            ':pk': runItemKey(runId)[TABLE_LAYOUT.partitionKey],
            ':prefix': CHAIN_ENTRY_SORT_PREFIX,
          },
          ConsistentRead: true,
          ...(cursor ? { ExclusiveStartKey: cursor } : {}),
        }),
      );
      for (const item of page.Items ?? []) {
        entries.push(withoutItemAttributes(item));
      }
      cursor = page.LastEvaluatedKey;
    } while (cursor);
    return entries;
  }

  public async appendEntry(entry: ChainEntry): Promise<AppendOutcome> {
    const parsed = chainEntrySchema.parse(entry);
    const removeAfter = this.props.removeAfter?.();
    const appended = await putIfAbsent(this.props.client, this.props.tableName, {
      ...parsed,
      ...(removeAfter === undefined ? {} : { [TABLE_LAYOUT.timeToLiveAttribute]: removeAfter }),
      ...chainEntryItemKey(parsed.runId, parsed.sequence),
    });
    return appended ? { kind: 'appended' } : { kind: 'sequence-taken' };
  }
}

/** The entry without the item's key and removal stamp: a receipt holds the entry, not the item. */
function withoutItemAttributes(item: Record<string, unknown>): Record<string, unknown> {
  const {
    [TABLE_LAYOUT.partitionKey]: _partition,
    [TABLE_LAYOUT.sortKey]: _sort,
    [TABLE_LAYOUT.timeToLiveAttribute]: _removeAfter,
    ...entry
  } = item;
  return entry;
}
