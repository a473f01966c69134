import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import type { CardMailKey, EmailDigest, EmailNotificationStore } from '../../core/channels/email-ports.js';
import { queryWholePartition } from './fixed-partition.js';
import { isConditionalCheckFailed } from './item-codec.js';
import { putIfAbsent } from './put-if-absent.js';
import { cardMailItemKey } from './run-item-keys.js';
import type { RunTable } from './run-table.js';
import { UpdateExpression } from './update-expression.js';

const PK = TABLE_LAYOUT.partitionKey;
const SK = TABLE_LAYOUT.sortKey;
/** Every approver's digest in one partition: a flush is one Query, however many approvers there are. */
const DIGESTS_PARTITION = 'EMAIL-DIGESTS';
const DIGEST_SORT_PREFIX = 'DIGEST#';

const digestKey = (userId: string) => ({ [PK]: DIGESTS_PARTITION, [SK]: `${DIGEST_SORT_PREFIX}${userId}` });

/**
 * The email channel's items on DynamoDB: each card mail's claim in its run's partition
 * (`MAIL#<turn>#<userId>`, leaving with the run) and each approver's digest in `EMAIL-DIGESTS`
 * (the waiting run ids as a string set, so concurrent additions never lose one).
 *
 * @example
 * const store = new DynamoEmailNotificationStore(new RunTable(client, tableName, retention, clock));
 * if (await store.claimMail({ runId, turn, userId }, now)) await mail.sendMail(...);
 */
export class DynamoEmailNotificationStore implements EmailNotificationStore {
  public constructor(private readonly table: RunTable) {}

  public claimMail(key: CardMailKey, now: string): Promise<boolean> {
    const removeAfter = this.table.endedRunRemoval();
    return putIfAbsent(
      this.table.client,
      this.table.tableName,
      {
        ...key,
        state: 'sent',
        sentAt: now,
        ...cardMailItemKey(key.runId, key.turn, key.userId),
        ...(removeAfter === undefined ? {} : { [TABLE_LAYOUT.timeToLiveAttribute]: removeAfter }),
      },
      // The first claim wins; one whose send failed may be claimed again.
      { condition: '#state = :failed', names: { '#state': 'state' }, values: { ':failed': 'failed' } },
    );
  }

  public async releaseMail(key: CardMailKey): Promise<void> {
    await this.table.client.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: cardMailItemKey(key.runId, key.turn, key.userId),
        ...new UpdateExpression().set('state', 'failed').toInput(),
      }),
    );
  }

  public async addToDigest(userId: string, runId: string): Promise<void> {
    await this.table.client.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: digestKey(userId),
        ...new UpdateExpression()
          .set('userId', userId)
          .addToSet('runIds', new Set([runId]))
          .toInput(),
      }),
    );
  }

  public async listDigests(): Promise<EmailDigest[]> {
    const items = await queryWholePartition(this.table.client, this.table.tableName, DIGESTS_PARTITION);
    return items.flatMap((item) => {
      const runIds = item.runIds instanceof Set ? [...item.runIds].map(String).sort() : [];
      if (typeof item.userId !== 'string' || runIds.length === 0) return [];
      return [
        {
          userId: item.userId,
          runIds,
          ...(typeof item.lastSentAt === 'string' ? { lastSentAt: item.lastSentAt } : {}),
        },
      ];
    });
  }

  public async takeDigest(digest: EmailDigest, now: string): Promise<boolean> {
    const update = new UpdateExpression()
      .set('lastSentAt', now)
      .deleteFromSet('runIds', new Set(digest.runIds));
    const lastSentAt = update.name('lastSentAt');
    // Taken once: a flush that read the same digest finds `lastSentAt` moved and sends nothing.
    const condition =
      digest.lastSentAt === undefined
        ? `attribute_not_exists(${lastSentAt})`
        : `${lastSentAt} = ${update.value(digest.lastSentAt)}`;
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: digestKey(digest.userId),
          ...update.toInput(condition),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  public async returnToDigest(userId: string, runIds: readonly string[]): Promise<void> {
    if (runIds.length === 0) return;
    await this.table.client.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: digestKey(userId),
        ...new UpdateExpression().addToSet('runIds', new Set(runIds)).toInput(),
      }),
    );
  }
}
