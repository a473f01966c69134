import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import type { ConditionalOutcome, RunRepository } from '../../core/ports.js';
import {
  type CallRecord,
  type CallRecordExpectation,
  callRecordSchema,
  readableCallRecordSchema,
} from '../../core/runs/call-record.js';
import { parseItem } from './item-codec.js';
import { type PutCondition, putWhen } from './put-if-absent.js';
import { assertTurn, callItemKey, callSortPrefix, runFromKey, runPartitionKey } from './run-item-keys.js';
import type { RunTable } from './run-table.js';

type LedgerMethods = 'listCallRecords' | 'putCallRecord';

const PK = TABLE_LAYOUT.partitionKey;
const SK = TABLE_LAYOUT.sortKey;
/** A turn holds at most 50 calls (a card shows them all): one page of the query holds them. */
const CALLS_PER_TURN_BOUND = 100;

/**
 * The call ledger of `RunRepository` on DynamoDB: one item per approved call of a turn in the
 * run's partition (`CALL#<turn>#<index>`), replaced whole by a conditional put on the attempt
 * and state it was read in. It goes with the run: ended runs' items expire with their retention.
 *
 * @example
 * const ledger = new DynamoCallLedgerStore(new RunTable(client, tableName, undefined, systemClock));
 * const records = await ledger.listCallRecords('run-1', 3);
 */
export class DynamoCallLedgerStore implements Pick<RunRepository, LedgerMethods> {
  public constructor(private readonly table: RunTable) {}

  public async listCallRecords(runId: string, turn: number): Promise<CallRecord[]> {
    assertTurn(turn);
    const { Items: items = [] } = await this.table.client.send(
      new QueryCommand({
        TableName: this.table.tableName,
        KeyConditionExpression: '#pk = :partition AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':partition': runPartitionKey(runId), ':prefix': callSortPrefix(turn) },
        ConsistentRead: true,
        Limit: CALLS_PER_TURN_BOUND,
      }),
    );
    return items.map((item) => runFromKey(runId, parseItem(readableCallRecordSchema, item, 'call record')));
  }

  public async putCallRecord(
    record: CallRecord,
    expected: CallRecordExpectation,
  ): Promise<ConditionalOutcome> {
    const parsed = callRecordSchema.parse(record);
    assertTurn(parsed.turn);
    const condition: PutCondition =
      expected.kind === 'absent'
        ? {
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PK },
          }
        : {
            ConditionExpression: '#attemptId = :attemptId AND #state = :state',
            ExpressionAttributeNames: { '#attemptId': 'attemptId', '#state': 'state' },
            ExpressionAttributeValues: { ':attemptId': expected.attemptId, ':state': expected.state },
          };
    const removeAfter = this.table.endedRunRemoval();
    const item = {
      ...parsed,
      // Kept as long as an ended run at most: the ledger serves the run's own retries.
      ...(removeAfter === undefined ? {} : { [TABLE_LAYOUT.timeToLiveAttribute]: removeAfter }),
      ...callItemKey(parsed.runId, parsed.turn, parsed.index),
    };
    const written = await putWhen(this.table.client, this.table.tableName, item, condition);
    return { kind: written ? 'written' : 'condition-failed' };
  }
}
