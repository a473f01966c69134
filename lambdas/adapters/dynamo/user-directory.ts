import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import {
  type Away,
  adminUserProfileSchema,
  type UserProfile,
  userProfileSchema,
} from '../../core/identity.js';
import type { ConditionalOutcome, PageRequest, UserDirectory } from '../../core/ports.js';
import { queryPartitionPage, queryWholePartition } from './fixed-partition.js';
import { isConditionalCheckFailed, parseItem, withoutUndefined } from './item-codec.js';
import type { DynamoTableProps } from './run-repository.js';
import { UpdateExpression } from './update-expression.js';

const USERS = { partition: 'USERS', sortKeyPrefix: 'USER#' };

/** The key of a user's item (other adapters read it in a batch beside their own items). */
export function userItemKey(userId: string): Record<string, string> {
  return {
    [TABLE_LAYOUT.partitionKey]: USERS.partition,
    [TABLE_LAYOUT.sortKey]: `${USERS.sortKeyPrefix}${userId}`,
  };
}

/**
 * A user item as the core reads it: DynamoDB hands the `delegatedBy` pointers back as a string
 * set (ADD and DELETE keep one per delegator); the core holds a sorted list.
 *
 * @example
 * const user = parseUserItem(item); // item from a GetItem or a BatchGetItem
 */
export function parseUserItem(item: Record<string, unknown>): UserProfile {
  const pointers = item.delegatedBy;
  const user = pointers instanceof Set ? { ...item, delegatedBy: [...pointers].map(String).sort() } : item;
  return parseItem(userProfileSchema, user, 'user');
}

/**
 * `UserDirectory` on DynamoDB: user records (grants, page and language access) in the fixed
 * partition `USERS` (item layout in `run-repository.ts`). A record's delegation (`away`, the
 * `delegatedBy` pointers) is written apart from its other fields, so an admin's PUT of the
 * record never takes away someone's delegate.
 *
 * @example
 * const users = new DynamoUserDirectory({ client, tableName });
 * const approver = await users.getUser('alice');
 */
export class DynamoUserDirectory implements UserDirectory {
  public constructor(private readonly table: DynamoTableProps) {}

  public async getUser(userId: string): Promise<UserProfile | undefined> {
    const { Item: item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: userItemKey(userId),
      }),
    );
    return item ? parseUserItem(item) : undefined;
  }

  public async putUser(user: UserProfile): Promise<void> {
    // The profile's fields are set and an absent optional one removed; delegation stays.
    const profile = withoutUndefined(adminUserProfileSchema.parse(user));
    const update = new UpdateExpression().setAll(profile);
    for (const field of Object.keys(adminUserProfileSchema.shape)) {
      if (!(field in profile)) update.remove(field);
    }
    await this.table.client.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: userItemKey(profile.userId),
        ...update.toInput(),
      }),
    );
  }

  public async setAway(userId: string, away: Away | undefined): Promise<ConditionalOutcome> {
    const update = new UpdateExpression();
    if (away === undefined) update.remove('away');
    else update.set('away', away);
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: userItemKey(userId),
          ...update.toInput(`attribute_exists(${update.name(TABLE_LAYOUT.partitionKey)})`),
        }),
      );
      return { kind: 'written' };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { kind: 'condition-failed' };
      throw error;
    }
  }

  public async pointDelegate(delegate: string, delegator: string, change: 'add' | 'remove'): Promise<void> {
    const members = new Set([delegator]);
    const update =
      change === 'add'
        ? new UpdateExpression().addToSet('delegatedBy', members)
        : new UpdateExpression().deleteFromSet('delegatedBy', members);
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: userItemKey(delegate),
          ...update.toInput(`attribute_exists(${update.name(TABLE_LAYOUT.partitionKey)})`),
        }),
      );
    } catch (error) {
      // No record for the delegate: nowhere to point from (the use case checked it exists).
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  public async listUsersPage(options: PageRequest): Promise<{ items: UserProfile[]; cursor?: string }> {
    const page = await queryPartitionPage(this.table.client, this.table.tableName, USERS, options);
    return { ...page, items: page.items.map(parseUserItem) };
  }

  public async deleteUser(userId: string): Promise<boolean> {
    const { Attributes: previous } = await this.table.client.send(
      new DeleteCommand({
        TableName: this.table.tableName,
        Key: userItemKey(userId),
        ReturnValues: 'ALL_OLD',
      }),
    );
    return previous !== undefined;
  }

  public async listUsers(): Promise<UserProfile[]> {
    const items = await queryWholePartition(this.table.client, this.table.tableName, USERS.partition);
    return items.map(parseUserItem);
  }
}
