import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { type UserProfile, userProfileSchema } from '../../core/identity.js';
import type { PageRequest, UserDirectory } from '../../core/ports.js';
import { queryPartitionPage, queryWholePartition } from './fixed-partition.js';
import { parseItem, withoutUndefined } from './item-codec.js';
import type { DynamoRepositoryProps } from './run-repository.js';

const USERS = { partition: 'USERS', sortKeyPrefix: 'USER#' };

/** The key of a user's item (other adapters read it in a batch beside their own items). */
export function userItemKey(userId: string): Record<string, string> {
  return {
    [TABLE_LAYOUT.partitionKey]: USERS.partition,
    [TABLE_LAYOUT.sortKey]: `${USERS.sortKeyPrefix}${userId}`,
  };
}

/**
 * `UserDirectory` on DynamoDB: user records (grants, page and language access) in the fixed
 * partition `USERS` (item layout in `run-repository.ts`).
 *
 * @example
 * const users = new DynamoUserDirectory({ client, tableName });
 * const approver = await users.getUser('alice');
 */
export class DynamoUserDirectory implements UserDirectory {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;

  public constructor(props: Pick<DynamoRepositoryProps, 'client' | 'tableName'>) {
    this.client = props.client;
    this.tableName = props.tableName;
  }

  public async getUser(userId: string): Promise<UserProfile | undefined> {
    const { Item: item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: userItemKey(userId),
      }),
    );
    return item ? parseItem(userProfileSchema, item, 'user') : undefined;
  }

  public async putUser(user: UserProfile): Promise<void> {
    const parsed = userProfileSchema.parse(user);
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...withoutUndefined(parsed),
          ...userItemKey(parsed.userId),
        },
      }),
    );
  }

  public async listUsersPage(options: PageRequest): Promise<{ items: UserProfile[]; cursor?: string }> {
    const page = await queryPartitionPage(this.client, this.tableName, USERS, options);
    return { ...page, items: page.items.map((item) => parseItem(userProfileSchema, item, 'user')) };
  }

  public async deleteUser(userId: string): Promise<boolean> {
    const { Attributes: previous } = await this.client.send(
      new DeleteCommand({
        TableName: this.tableName,
        Key: userItemKey(userId),
        ReturnValues: 'ALL_OLD',
      }),
    );
    return previous !== undefined;
  }

  public async listUsers(): Promise<UserProfile[]> {
    const items = await queryWholePartition(this.client, this.tableName, USERS.partition);
    return items.map((item) => parseItem(userProfileSchema, item, 'user'));
  }
}
