import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import {
  type SlackUserMapping,
  type SlackUserMappings,
  slackUserMappingSchema,
} from '../../core/channels/slack-ports.js';
import type { PageRequest } from '../../core/ports.js';
import { queryPartitionPage } from './fixed-partition.js';
import { parseItem } from './item-codec.js';

const SLACK_USERS = { partition: 'SLACK-USERS', sortKeyPrefix: 'SLACK-USER#' };

/** The stored item carries its key attributes beside the link's fields: read without them. */
const storedSlackUserSchema = z.object(slackUserMappingSchema.shape);

const slackUserKey = (slackUserId: string) => ({
  [TABLE_LAYOUT.partitionKey]: SLACK_USERS.partition,
  [TABLE_LAYOUT.sortKey]: `${SLACK_USERS.sortKeyPrefix}${slackUserId}`,
});

/**
 * `SlackUserMappings` on DynamoDB: the admin's links of Slack users to countersign users, in the
 * fixed partition `SLACK-USERS`, one item per Slack user (so a button press reads one item).
 *
 * @example
 * const links = new DynamoSlackUserDirectory({ client, tableName });
 * const link = await links.getSlackUser('U0123456789');
 */
export class DynamoSlackUserDirectory implements SlackUserMappings {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;

  public constructor(props: { client: DynamoDBDocumentClient; tableName: string }) {
    this.client = props.client;
    this.tableName = props.tableName;
  }

  public async getSlackUser(slackUserId: string): Promise<SlackUserMapping | undefined> {
    const { Item: item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: slackUserKey(slackUserId), ConsistentRead: true }),
    );
    return item ? parseItem(storedSlackUserSchema, item, 'Slack user link') : undefined;
  }

  public async putSlackUser(mapping: SlackUserMapping): Promise<void> {
    const parsed = slackUserMappingSchema.parse(mapping);
    await this.client.send(
      new PutCommand({ TableName: this.tableName, Item: { ...parsed, ...slackUserKey(parsed.slackUserId) } }),
    );
  }

  public async deleteSlackUser(slackUserId: string): Promise<boolean> {
    const { Attributes: previous } = await this.client.send(
      new DeleteCommand({
        TableName: this.tableName,
        Key: slackUserKey(slackUserId),
        ReturnValues: 'ALL_OLD',
      }),
    );
    return previous !== undefined;
  }

  public async listSlackUsersPage(
    options: PageRequest,
  ): Promise<{ items: SlackUserMapping[]; cursor?: string }> {
    const page = await queryPartitionPage(this.client, this.tableName, SLACK_USERS, options);
    return {
      ...page,
      items: page.items.map((item) => parseItem(storedSlackUserSchema, item, 'Slack user link')),
    };
  }
}
