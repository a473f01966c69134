import { type DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { type DecisionRecord, readableDecisionRecordSchema } from '../../core/approvals/decision-record.js';
import type { RecordedDecisionSource } from '../../core/policy/replay-decisions.js';

/**
 * The decisions on record, for the policy replay: a read-only Scan of the table for decision items
 * (`DECISION#<turn>` in each run's partition) decided since a time, page by page, never the whole
 * table in memory. Run with the operator's own credentials; no countersign Lambda may Scan.
 *
 * @example
 * for await (const page of new DynamoRecordedDecisions({ client, tableName }).pages({ since, pageSize: 200 })) …
 */
export class DynamoRecordedDecisions implements RecordedDecisionSource {
  public constructor(
    private readonly props: { readonly client: DynamoDBDocumentClient; readonly tableName: string },
  ) {}

  public async *pages(options: { since: Date; pageSize: number }): AsyncIterable<DecisionRecord[]> {
    const pages = paginateScan(
      { client: this.props.client, pageSize: options.pageSize },
      {
        TableName: this.props.tableName,
        FilterExpression: 'begins_with(#sk, :decision) AND #decidedAt >= :since AND #decision <> :cancel',
        ExpressionAttributeNames: {
          '#sk': TABLE_LAYOUT.sortKey,
          '#decidedAt': 'decidedAt',
          '#decision': 'decision',
        },
        ExpressionAttributeValues: {
          ':decision': 'DECISION#',
          ':since': options.since.toISOString(),
          ':cancel': 'cancel',
        },
        ConsistentRead: false,
      },
    );
    for await (const page of pages) {
      const records: DecisionRecord[] = [];
      for (const item of page.Items ?? []) {
        // A record no version reads is left out, not guessed at: the replay says what it read.
        const parsed = readableDecisionRecordSchema.safeParse(item);
        if (parsed.success) records.push(parsed.data);
      }
      if (records.length > 0) yield records;
    }
  }
}
