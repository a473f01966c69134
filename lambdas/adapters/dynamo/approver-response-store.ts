import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import {
  type ApproverResponse,
  type ApproverResponseStore,
  approverResponseSchema,
  type ResponsePage,
  type ResponsePageRequest,
  readableApproverResponseSchema,
  responseOrderKey,
} from '../../core/analytics/approver-response.js';
import { decodeCursor, encodeCursor, hasExactAttributes, parseItem } from './item-codec.js';

const PARTITION_PREFIX = 'RESPONSES#';

/** `RESPONSES#<yyyy-mm>`: one partition per month, so a range of days reads a few partitions. */
function monthPartition(at: Date): string {
  return `${PARTITION_PREFIX}${at.toISOString().slice(0, 7)}`;
}

/**
 * Approver responses on DynamoDB, by month and time (the admin's analytics read a range of days
 * with a Query per month). A response is put under its run and receipt entry, so recording it
 * again writes the same item. Kept like decision records.
 *
 * @example
 * const responses = new DynamoApproverResponseStore({ client, tableName });
 * await responses.recordResponse(response);
 */
export class DynamoApproverResponseStore implements ApproverResponseStore {
  public constructor(
    private readonly props: {
      readonly client: DynamoDBDocumentClient;
      readonly tableName: string;
      /** The `removeAfter` stamp of a new response (decision retention); undefined keeps it. */
      readonly removeAfter?: () => number | undefined;
    },
  ) {}

  public async recordResponse(response: ApproverResponse): Promise<void> {
    const parsed = approverResponseSchema.parse(response);
    const removeAfter = this.props.removeAfter?.();
    await this.props.client.send(
      new PutCommand({
        TableName: this.props.tableName,
        Item: {
          ...parsed,
          ...(removeAfter === undefined ? {} : { [TABLE_LAYOUT.timeToLiveAttribute]: removeAfter }),
          [TABLE_LAYOUT.partitionKey]: monthPartition(new Date(parsed.respondedAt)),
          [TABLE_LAYOUT.sortKey]: responseOrderKey(parsed),
        },
      }),
    );
  }

  public async listResponses(options: ResponsePageRequest): Promise<ResponsePage> {
    const months = monthsBetween(options.from, options.to);
    const after = options.cursor === undefined ? undefined : this.decode(options.cursor, months);
    const items: ApproverResponse[] = [];
    let last: Record<string, unknown> | undefined;
    for (const month of months.slice(after ? months.indexOf(String(after[TABLE_LAYOUT.partitionKey])) : 0)) {
      let start = after?.[TABLE_LAYOUT.partitionKey] === month ? after : undefined;
      do {
        const page = await this.props.client.send(
          new QueryCommand({
            TableName: this.props.tableName,
            KeyConditionExpression: '#pk = :month AND #sk BETWEEN :from AND :to',
            ExpressionAttributeNames: { '#pk': TABLE_LAYOUT.partitionKey, '#sk': TABLE_LAYOUT.sortKey },
            ExpressionAttributeValues: {
              ':month': month,
              ':from': options.from.toISOString(),
              ':to': `${options.to.toISOString()}#\uffff`,
            },
            Limit: options.limit - items.length,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
        for (const item of page.Items ?? []) {
          items.push(parseItem(readableApproverResponseSchema, item, 'approver response'));
          last = {
            [TABLE_LAYOUT.partitionKey]: item[TABLE_LAYOUT.partitionKey],
            [TABLE_LAYOUT.sortKey]: item[TABLE_LAYOUT.sortKey],
          };
        }
        start = page.LastEvaluatedKey;
        if (items.length >= options.limit) {
          const cursor = encodeCursor(last);
          return cursor === undefined ? { items } : { items, cursor };
        }
      } while (start);
    }
    return { items };
  }

  /** The key a cursor stands for: a response's key in one of the months read; anything else is a 400. */
  private decode(cursor: string, months: readonly string[]): Record<string, string> {
    return decodeCursor(
      cursor,
      (key) =>
        hasExactAttributes(key, [TABLE_LAYOUT.partitionKey, TABLE_LAYOUT.sortKey]) &&
        months.includes(String(key[TABLE_LAYOUT.partitionKey])),
    );
  }
}

/** The month partitions from `from` to `to`, oldest first. */
function monthsBetween(from: Date, to: Date): string[] {
  const months: string[] = [];
  const cursor = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), 1));
  while (cursor.getTime() <= to.getTime()) {
    months.push(monthPartition(cursor));
    cursor.setUTCMonth(cursor.getUTCMonth() + 1);
  }
  return months;
}
