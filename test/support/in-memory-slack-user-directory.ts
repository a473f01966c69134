import {
  type SlackUserMapping,
  type SlackUserMappings,
  slackUserMappingSchema,
} from '../../lambdas/core/channels/slack-ports.js';
import type { PageRequest } from '../../lambdas/core/ports.js';
import { InMemoryCollection } from './in-memory-collection.js';

/**
 * An in-memory `SlackUserMappings` for unit tests: links parsed as the DynamoDB directory stores
 * them, in Slack user id order with an opaque cursor.
 *
 * @example
 * const links = new InMemorySlackUserDirectory([{ slackUserId: 'U01', slackTeamId: 'T01', userId: 'alice' }]);
 */
export class InMemorySlackUserDirectory implements SlackUserMappings {
  private readonly links = new InMemoryCollection<SlackUserMapping>((link) => link.slackUserId);

  public constructor(links: readonly SlackUserMapping[] = []) {
    for (const link of links) this.links.put(slackUserMappingSchema.parse(link));
  }

  public async getSlackUser(slackUserId: string): Promise<SlackUserMapping | undefined> {
    return this.links.get(slackUserId);
  }

  public async putSlackUser(mapping: SlackUserMapping): Promise<void> {
    this.links.put(slackUserMappingSchema.parse(mapping));
  }

  public async deleteSlackUser(slackUserId: string): Promise<boolean> {
    return this.links.delete(slackUserId);
  }

  public async listSlackUsersPage(
    options: PageRequest,
  ): Promise<{ items: SlackUserMapping[]; cursor?: string }> {
    return this.links.page(options);
  }
}
