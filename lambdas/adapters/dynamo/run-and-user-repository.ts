import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import type { UserProfile } from '../../core/identity.js';
import type { StoredRun } from '../../core/ports.js';
import { batchGetItems } from './batch-get-items.js';
import { runItemKey } from './run-item-keys.js';
import { DynamoRunRepository } from './run-repository.js';
import { parseUserItem, userItemKey } from './user-directory.js';

/**
 * `DynamoRunRepository` that also reads a run and a user's current record in ONE BatchGetItem
 * (`getRunAndUser`): the pause reads the run and its owner's rights as they are now. Apart, so
 * only the functions that pause a run carry it in their bundle.
 *
 * @example
 * const runs = new DynamoRunAndUserRepository({ client, tableName, blobStore });
 * const { run, user } = await runs.getRunAndUser(runId, ownerId);
 */
export class DynamoRunAndUserRepository extends DynamoRunRepository {
  public async getRunAndUser(
    runId: string,
    userId: string,
  ): Promise<{ run?: StoredRun; user?: UserProfile }> {
    const runKey = runItemKey(runId);
    const userKey = userItemKey(userId);
    const items = await batchGetItems(
      this.client,
      this.tableName,
      [runKey, userKey],
      'The run and its owner',
    );
    const itemOf = (key: Record<string, string>) =>
      items.find(
        (item) =>
          item[TABLE_LAYOUT.partitionKey] === key[TABLE_LAYOUT.partitionKey] &&
          item[TABLE_LAYOUT.sortKey] === key[TABLE_LAYOUT.sortKey],
      );
    const runItem = itemOf(runKey);
    const userItem = itemOf(userKey);
    return {
      ...(runItem ? { run: await this.storedRunOf(runId, runItem) } : {}),
      ...(userItem ? { user: parseUserItem(userItem) } : {}),
    };
  }
}
