import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { readableDecisionRecordSchema } from '../../core/approvals/decision-record.js';
import type { PauseRecords } from '../../core/ports.js';
import { batchGetItems } from './batch-get-items.js';
import { parseItem } from './item-codec.js';
import { cardItemKey, decisionItemKey, runFromKey, runItemKey } from './run-item-keys.js';
import { readStoredCardItem } from './run-item-schemas.js';
import { DynamoRunRepository } from './run-repository.js';
import { parseUserItem, userItemKey } from './user-directory.js';

/**
 * `DynamoRunRepository` that also reads a run and a user's current record in ONE BatchGetItem
 * (`getRunAndUser`): the pause reads the run and its owner's rights as they are now, and with
 * the turn, the run's card and that turn's decision in the same request (a retried pause must
 * see both). Apart, so only the functions that pause a run carry it in their bundle.
 *
 * @example
 * const runs = new DynamoRunAndUserRepository({ client, tableName, blobStore });
 * const { run, user, card, decision } = await runs.getRunAndUser(runId, ownerId, turn);
 */
export class DynamoRunAndUserRepository extends DynamoRunRepository {
  public async getRunAndUser(runId: string, userId: string, turn?: number): Promise<PauseRecords> {
    const runKey = runItemKey(runId);
    const userKey = userItemKey(userId);
    const cardKey = cardItemKey(runId);
    const decisionKey = turn === undefined ? undefined : decisionItemKey(runId, turn);
    const items = await batchGetItems(
      this.client,
      this.tableName,
      turn === undefined || decisionKey === undefined
        ? [runKey, userKey]
        : [runKey, userKey, cardKey, decisionKey],
      'The run and its owner',
    );
    const itemOf = (key: Record<string, string> | undefined) =>
      key &&
      items.find(
        (item) =>
          item[TABLE_LAYOUT.partitionKey] === key[TABLE_LAYOUT.partitionKey] &&
          item[TABLE_LAYOUT.sortKey] === key[TABLE_LAYOUT.sortKey],
      );
    const runItem = itemOf(runKey);
    const userItem = itemOf(userKey);
    const cardItem = turn === undefined ? undefined : itemOf(cardKey);
    const decisionItem = itemOf(decisionKey);
    // A card that does not parse is no card to the pause: it puts a fresh one.
    const card = cardItem ? readStoredCardItem(cardItem) : undefined;
    return {
      ...(runItem ? { run: await this.storedRunOf(runId, runItem) } : {}),
      ...(userItem ? { user: parseUserItem(userItem) } : {}),
      ...(card ? { card: runFromKey(runId, card) } : {}),
      ...(decisionItem
        ? { decision: runFromKey(runId, parseItem(readableDecisionRecordSchema, decisionItem, 'decision')) }
        : {}),
    };
  }
}
