import { Token } from 'aws-cdk-lib';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IEmailIdentity } from 'aws-cdk-lib/aws-ses';
import type { IConstruct } from 'constructs';
import * as z from 'zod/mini';
import {
  type SlackRoute,
  slackRouteSchema,
  slackRoutesSchema,
} from '../lambdas/core/channels/slack-routes.js';
import { formatSchemaIssues } from '../lambdas/core/schema-messages.js';
import { invalidProp } from './validation-error.js';

/** Where a card is posted in Slack (docs/approvers.md, "Slack"). */
export interface CountersignSlackRoute {
  /** The channel's id (`C…` or `G…`; in Slack: the channel's details, at the bottom). */
  readonly channelId: string;
  /**
   * The approver group whose cards go to this channel. Without one, the channel takes the cards
   * routed to every approver (never a group's card).
   *
   * @default - the cards routed to every approver
   */
  readonly approverGroup?: string;
  /**
   * Only this configuration's cards.
   *
   * @default - every configuration's
   */
  readonly configurationId?: string;
}

/** The Slack channel: an app's secrets and where its messages go. */
export interface CountersignSlackChannel {
  /**
   * The app's signing secret (Basic Information → App Credentials): the secret's string, or JSON
   * with a `signingSecret` field. Only the interaction function may read it.
   */
  readonly signingSecret: ISecret;
  /** The app's bot token (`xoxb-…`): the secret's string, or JSON with a `botToken` field. */
  readonly botToken: ISecret;
  /** Where cards are posted: 1 to 20 routes; a card goes to each route that takes it. */
  readonly routes: readonly CountersignSlackRoute[];
}

/** The email channel: the SES identity mail is sent as. */
export interface CountersignEmailChannel {
  /** A verified SES identity (a domain or an address), e.g. `EmailIdentity.fromEmailIdentityName(...)`. */
  readonly identity: IEmailIdentity;
  /** The From address: the identity itself, or an address of its domain (or a subdomain of it). */
  readonly fromAddress: string;
}

/**
 * The notification channels a team switches on: each is a Lambda target of countersign's events
 * on the default bus, with retries and a dead-letter queue, and its failures alarm.
 */
export interface CountersignChannelsProps {
  /** @default - no Slack channel, and no Slack route on the API */
  readonly slack?: CountersignSlackChannel;
  /** @default - no mail */
  readonly email?: CountersignEmailChannel;
}

/** The channels with their routes parsed: what the construct builds. */
export interface ResolvedChannels {
  readonly slack?: Omit<CountersignSlackChannel, 'routes'> & { readonly routes: readonly SlackRoute[] };
  readonly email?: CountersignEmailChannel;
}

/**
 * Refuses channel props that would deploy a channel that cannot work, quoting the value: a route
 * whose channel id, group or configuration id countersign would never match, a From address
 * outside the identity.
 *
 * @example
 * const channels = resolveChannels(this, props.channels);
 */
export function resolveChannels(
  scope: IConstruct,
  channels: CountersignChannelsProps = {},
): ResolvedChannels {
  return {
    ...(channels.slack === undefined ? {} : { slack: resolveSlack(scope, channels.slack) }),
    ...(channels.email === undefined ? {} : { email: resolveEmail(scope, channels.email) }),
  };
}

function resolveSlack(
  scope: IConstruct,
  slack: CountersignSlackChannel,
): NonNullable<ResolvedChannels['slack']> {
  for (const [index, route] of slack.routes.entries()) {
    const parsed = slackRouteSchema.safeParse(route);
    if (!parsed.success) {
      throw invalidProp(
        scope,
        `channels.slack.routes[${index}] ${JSON.stringify(route)} is invalid: ${formatSchemaIssues(parsed.error.issues.slice(0, 1))}; use e.g. { channelId: 'C0123456789', approverGroup: 'finance' }.`,
      );
    }
  }
  const routes = slackRoutesSchema.safeParse(slack.routes);
  if (!routes.success) {
    throw invalidProp(
      scope,
      `channels.slack.routes has ${slack.routes.length} routes; give 1 to 20, e.g. [{ channelId: 'C0123456789' }].`,
    );
  }
  const keys = routes.data.map((route) =>
    JSON.stringify([route.channelId, route.approverGroup ?? '', route.configurationId ?? '']),
  );
  const repeated = routes.data.find((_, index) => keys.indexOf(keys[index] ?? '') !== index);
  if (repeated !== undefined) {
    throw invalidProp(
      scope,
      `channels.slack.routes lists ${JSON.stringify(repeated)} twice; list each route once.`,
    );
  }
  return { ...slack, routes: routes.data };
}

function resolveEmail(scope: IConstruct, email: CountersignEmailChannel): CountersignEmailChannel {
  const address = z.string().check(z.email()).safeParse(email.fromAddress);
  if (!address.success) {
    throw invalidProp(
      scope,
      `channels.email.fromAddress ${JSON.stringify(email.fromAddress)} is not an email address; use e.g. 'countersign@example.com'.`,
    );
  }
  const identity = email.identity.emailIdentityName;
  if (!Token.isUnresolved(identity)) {
    const domain = email.fromAddress.slice(email.fromAddress.lastIndexOf('@') + 1).toLowerCase();
    const name = identity.toLowerCase();
    const covered = name.includes('@')
      ? name === email.fromAddress.toLowerCase()
      : domain === name || domain.endsWith(`.${name}`);
    if (!covered) {
      throw invalidProp(
        scope,
        `channels.email.fromAddress ${JSON.stringify(email.fromAddress)} is not covered by the SES identity ${JSON.stringify(identity)}; use that address, or an address of that domain.`,
      );
    }
  }
  return email;
}
