import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type UserProfile, userProfileSchema } from '../../core/identity.js';
import type { UserDirectory } from '../../core/ports.js';
import { queryWholePartition } from './fixed-partition.js';
import { parseItem, withoutUndefined } from './item-codec.js';
import type { DynamoRepositoryProps } from './run-repository.js';
import { TABLE_LAYOUT } from './table-layout.js';

const USERS_PARTITION = 'USERS';
const userSortKey = (userId: string): string => `USER#${userId}`;

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
        Key: { [TABLE_LAYOUT.partitionKey]: USERS_PARTITION, [TABLE_LAYOUT.sortKey]: userSortKey(userId) },
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
          [TABLE_LAYOUT.partitionKey]: USERS_PARTITION,
          [TABLE_LAYOUT.sortKey]: userSortKey(parsed.userId),
        },
      }),
    );
  }

  public async listUsers(): Promise<UserProfile[]> {
    const items = await queryWholePartition(this.client, this.tableName, USERS_PARTITION);
    return items.map((item) => parseItem(userProfileSchema, item, 'user'));
  }
}
