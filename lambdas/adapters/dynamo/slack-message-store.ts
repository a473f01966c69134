import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import type {
  SlackMessageKey,
  SlackMessageRecord,
  SlackMessageStore,
  SlackReplayGuard,
} from '../../core/channels/slack-ports.js';
import { isConditionalCheckFailed, parseItem } from './item-codec.js';
import { putIfAbsent } from './put-if-absent.js';
import { runPartitionKey, SLACK_MESSAGE_SORT_PREFIX, slackMessageItemKey } from './run-item-keys.js';
import type { RunTable } from './run-table.js';
import { UpdateExpression } from './update-expression.js';

const PK = TABLE_LAYOUT.partitionKey;
const SK = TABLE_LAYOUT.sortKey;

const slackMessageItemSchema = z.object({
  runId: z.string(),
  turn: z.number().check(z.int(), z.nonnegative()),
  channelId: z.string(),
  state: z.enum(['posting', 'open', 'closed']),
  ts: z.optional(z.string()),
  updatedAt: z.string(),
});

/** The partition of a used Slack signature: one item each, kept until its window has passed. */
const SIGNATURE_PARTITION_PREFIX = 'SLACK-SIGNATURE#';

/**
 * The Slack channel's items on DynamoDB: each card message in its run's partition
 * (`SLACK#<turn>#<channelId>`, so a run's messages are one Query and leave with the run), and the
 * signatures of the requests already served (`SLACK-SIGNATURE#<hex>`, removed by TTL after their
 * 5-minute window; locally the start sweep removes them).
 *
 * @example
 * const store = new DynamoSlackStore(new RunTable(client, tableName, retention, clock));
 * await store.claimPosting({ runId, turn: 1, channelId: 'C0123' }, now, staleBefore);
 */
export class DynamoSlackStore implements SlackMessageStore, SlackReplayGuard {
  public constructor(private readonly table: RunTable) {}

  public async listMessages(runId: string): Promise<SlackMessageRecord[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const output = await this.table.client.send(
        new QueryCommand({
          TableName: this.table.tableName,
          KeyConditionExpression: '#pk = :partition AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: {
            ':partition': runPartitionKey(runId),
            ':prefix': SLACK_MESSAGE_SORT_PREFIX,
          },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      items.push(...(output.Items ?? []));
      startKey = output.LastEvaluatedKey;
    } while (startKey);
    return items.map((item) => ({ ...parseItem(slackMessageItemSchema, item, 'Slack message'), runId }));
  }

  public claimPosting(key: SlackMessageKey, now: string, staleBefore: string): Promise<boolean> {
    return putIfAbsent(
      this.table.client,
      this.table.tableName,
      {
        ...key,
        state: 'posting',
        updatedAt: now,
        ...slackMessageItemKey(key.runId, key.turn, key.channelId),
      },
      // New, or a claim whose poster never came back (written before `staleBefore`).
      {
        condition: '#state = :posting AND #updatedAt < :staleBefore',
        names: { '#state': 'state', '#updatedAt': 'updatedAt' },
        values: { ':posting': 'posting', ':staleBefore': staleBefore },
      },
    );
  }

  public async abandonPosting(key: SlackMessageKey): Promise<void> {
    // An empty time sorts before every ISO time: the claim is stale at once.
    await this.updateMessage(key, new UpdateExpression().set('updatedAt', ''), 'posting');
  }

  public async recordPosted(key: SlackMessageKey, ts: string, now: string): Promise<void> {
    await this.updateMessage(
      key,
      new UpdateExpression().set('state', 'open').set('ts', ts).set('updatedAt', now),
      'posting',
    );
  }

  public async recordClosed(key: SlackMessageKey, now: string): Promise<void> {
    await this.updateMessage(
      key,
      new UpdateExpression()
        .set('state', 'closed')
        .set('updatedAt', now)
        .setWhenDefined(TABLE_LAYOUT.timeToLiveAttribute, this.table.endedRunRemoval()),
      'open',
    );
  }

  public claimSignature(signature: string, keepUntilSeconds: number): Promise<boolean> {
    const partition = `${SIGNATURE_PARTITION_PREFIX}${signature}`;
    return putIfAbsent(this.table.client, this.table.tableName, {
      [PK]: partition,
      [SK]: 'SLACK-SIGNATURE',
      [TABLE_LAYOUT.timeToLiveAttribute]: keepUntilSeconds,
    });
  }

  /** Changes a message in `expectedState` only; one that moved on meanwhile is left as it is. */
  private async updateMessage(
    key: SlackMessageKey,
    update: UpdateExpression,
    expectedState: SlackMessageRecord['state'],
  ): Promise<void> {
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: slackMessageItemKey(key.runId, key.turn, key.channelId),
          ...update.toInput(`${update.name('state')} = ${update.value(expectedState)}`),
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }
}
