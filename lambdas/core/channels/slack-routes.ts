import * as z from 'zod/mini';
import { approverGroupSchema, routedGroupsOf } from '../approvals/card-routing.js';
import type { StoredCard } from '../approvals/stored-card.js';
import { configurationSchema } from '../configurations.js';

/** A Slack conversation id: a public (`C…`) or private (`G…`) channel. Direct messages are no channel. */
const slackChannelIdSchema = z
  .string()
  .check(z.regex(/^[CG][A-Z0-9]{2,31}$/, 'a Slack channel id such as C0123456789'));

/**
 * Where a team's cards are posted in Slack: a channel, for the cards routed to one approver group
 * (`approverGroup`), or to every approver (no group), optionally of one configuration only.
 */
export const slackRouteSchema = z.strictObject({
  channelId: slackChannelIdSchema,
  approverGroup: z.optional(approverGroupSchema),
  configurationId: z.optional(configurationSchema.shape.configurationId),
});
export type SlackRoute = z.infer<typeof slackRouteSchema>;

/** At most this many routes: each card is viewed once per route that takes it. */
export const MAX_SLACK_ROUTES = 20;

export const slackRoutesSchema = z
  .array(slackRouteSchema)
  .check(z.minLength(1), z.maxLength(MAX_SLACK_ROUTES));

/**
 * The routes a card is posted to. A route with a group takes the cards routed to that group; a
 * route without one takes the cards routed to every approver (never a group's card: that channel
 * is not the group's). A route with a configuration takes only that configuration's cards.
 *
 * @example
 * slackRoutesOfCard([{ channelId: 'C01', approverGroup: 'finance' }], { approverGroups: ['finance'], configurationId: 'pages' });
 * // [{ channelId: 'C01', approverGroup: 'finance' }]
 */
export function slackRoutesOfCard(
  routes: readonly SlackRoute[],
  card: Pick<StoredCard, 'approverGroups' | 'configurationId' | 'escalation'>,
): SlackRoute[] {
  // The groups it reaches now: its own, and those its escalation added.
  const groups = routedGroupsOf(card);
  return routes.filter(
    (route) =>
      (route.configurationId === undefined || route.configurationId === card.configurationId) &&
      (route.approverGroup === undefined ? groups.length === 0 : groups.includes(route.approverGroup)),
  );
}
