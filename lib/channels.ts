import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { EnvironmentVariableName } from '../lambdas/contract/environment.js';
import {
  NOTIFICATION_DETAIL_TYPES,
  NOTIFICATION_EVENT_SOURCE,
} from '../lambdas/contract/notification-events.js';
import type { ResolvedChannels } from './channel-props.js';
import type { CountersignFunctions, HandlerEnvironment } from './countersign-functions.js';
import type { CountersignData } from './data.js';
import type { ChannelHandlerName } from './handler-names.js';
import { CHANNEL_HANDLER_DATA_PERMISSIONS, grantDataPermissions } from './handler-permissions.js';
import { grantDecision, grantEndRun } from './run-grants.js';

/** How often the email channel sends the digests that are due (so a digest may be up to this late). */
export const EMAIL_DIGEST_INTERVAL = Duration.minutes(5);

// Lambda retries a failed event twice itself (an invocation error: Slack or SES down, a throttled
// table); EventBridge retries a delivery it could not make. Whatever still fails is kept in the
// channel's dead-letter queue, where `ChannelDeadLetters` alarms on it.
const FUNCTION_RETRY_ATTEMPTS = 2;
const DELIVERY_RETRY_ATTEMPTS = 8;
const MAXIMUM_EVENT_AGE = Duration.hours(2);

/** Properties of {@link CountersignNotificationChannels}. */
export interface CountersignNotificationChannelsProps {
  readonly channels: ResolvedChannels;
  readonly functions: CountersignFunctions;
  readonly data: CountersignData;
  readonly table: Table;
  readonly stateMachine: StateMachine;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The notification channels a team switched on (docs/approvers.md, "Slack" and "Email"): a
 * Lambda per channel as a target of countersign's events on the default bus (`Run Awaiting
 * Approval`, and for Slack `Card Closed`), with retries and a dead-letter queue each, and for
 * Slack the interaction route's function. Each function holds exactly what its channel calls: its
 * row of CHANNEL_HANDLER_DATA_PERMISSIONS, its secrets, and (Slack's interactions) the decision.
 *
 * @example
 * const channels = new CountersignNotificationChannels(this, 'Channels', { channels, functions, data, table, stateMachine, removalPolicy });
 * channels.useInboxUrl(inboxUrl);
 */
export class CountersignNotificationChannels extends Construct {
  /** The functions of the channels that are on. */
  public readonly functions: Readonly<Partial<Record<ChannelHandlerName, LambdaFunction>>>;
  /** Each channel's undelivered events (encrypted, TLS only). */
  public readonly deadLetterQueues: readonly Queue[];

  public constructor(scope: Construct, id: string, props: CountersignNotificationChannelsProps) {
    super(scope, id);
    const functions: Partial<Record<ChannelHandlerName, LambdaFunction>> = {};
    const deadLetterQueues: Queue[] = [];
    const { slack, email } = props.channels;
    const withData = (name: ChannelHandlerName, environment: HandlerEnvironment): LambdaFunction => {
      const created = props.functions.createChannelFunction(name, environment);
      grantDataPermissions(props.data, created, CHANNEL_HANDLER_DATA_PERMISSIONS[name]);
      functions[name] = created;
      return created;
    };

    if (slack !== undefined) {
      const environment = {
        COUNTERSIGN_SLACK_BOT_TOKEN_SECRET_ARN: slack.botToken.secretArn,
        COUNTERSIGN_SLACK_ROUTES: JSON.stringify(slack.routes),
      } satisfies { [Name in EnvironmentVariableName]?: string };
      const notify = withData('slack-notify', environment);
      const interactions = withData('slack-interactions', {
        ...environment,
        COUNTERSIGN_SLACK_SIGNING_SECRET_ARN: slack.signingSecret.secretArn,
        // It signs the receipt entries of the decisions it records, as api-decision does.
        COUNTERSIGN_RECEIPT_KEY_ARN: props.data.receiptSigningKey.keyArn,
      } satisfies { [Name in EnvironmentVariableName]?: string });
      for (const handler of [notify, interactions]) {
        slack.botToken.grantRead(handler);
        // A card the reader cannot open ends its run (and closes the card, which is announced).
        grantEndRun(this, { table: props.table, stateMachine: props.stateMachine }, handler);
        props.functions.grantAnnounce(handler);
      }
      slack.signingSecret.grantRead(interactions);
      grantDecision(props.stateMachine, interactions);
      const deadLetterQueue = createDeadLetterQueue(this, 'SlackChannel', props.removalPolicy);
      deadLetterQueues.push(deadLetterQueue);
      targetEvents(this, 'SlackChannel', notify, deadLetterQueue, [
        NOTIFICATION_DETAIL_TYPES.awaitingApproval,
        NOTIFICATION_DETAIL_TYPES.cardClosed,
      ]);
    }

    if (email !== undefined) {
      const mail = withData('email-notify', {
        COUNTERSIGN_EMAIL_FROM_ADDRESS: email.fromAddress,
      } satisfies { [Name in EnvironmentVariableName]?: string });
      // SendEmail as the verified identity, from its one address only.
      Grant.addToPrincipal({
        grantee: mail,
        actions: ['ses:SendEmail'],
        resourceArns: [email.identity.emailIdentityArn],
        conditions: { StringEquals: { 'ses:FromAddress': email.fromAddress } },
      });
      const deadLetterQueue = createDeadLetterQueue(this, 'EmailChannel', props.removalPolicy);
      deadLetterQueues.push(deadLetterQueue);
      targetEvents(this, 'EmailChannel', mail, deadLetterQueue, [NOTIFICATION_DETAIL_TYPES.awaitingApproval]);
      new Rule(this, 'EmailDigestSchedule', {
        description: 'countersign: send the email digests that are due',
        schedule: Schedule.rate(EMAIL_DIGEST_INTERVAL),
        targets: [
          new LambdaTarget(mail, {
            retryAttempts: DELIVERY_RETRY_ATTEMPTS,
            maxEventAge: EMAIL_DIGEST_INTERVAL,
            deadLetterQueue,
          }),
        ],
      });
    }
    this.functions = functions;
    this.deadLetterQueues = deadLetterQueues;
  }

  /** Where messages and mails link each card: the inbox page's URL (the API's own unless `inboxUrl` names another). */
  public useInboxUrl(inboxUrl: string): void {
    for (const handler of Object.values(this.functions)) {
      handler.addEnvironment('COUNTERSIGN_INBOX_URL' satisfies EnvironmentVariableName, inboxUrl);
    }
  }
}

/** A channel's dead-letter queue: where its events go once every retry failed. */
function createDeadLetterQueue(scope: Construct, channel: string, removalPolicy: RemovalPolicy): Queue {
  const queue = new Queue(scope, `${channel}DeadLetterQueue`, {
    // SQS managed encryption: EventBridge and Lambda may send to it without a key policy of their own.
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
    removalPolicy,
  });
  Validations.of(queue).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason:
      'This queue is a notification channel’s dead-letter queue (its rule target’s and its function’s failures), not a work queue: a dead-letter queue of its own would only move the same events once more.',
  });
  return queue;
}

/** `handler` as the target of countersign's events of `detailTypes`, retried, then dead-lettered. */
function targetEvents(
  scope: Construct,
  channel: string,
  handler: LambdaFunction,
  deadLetterQueue: Queue,
  detailTypes: readonly string[],
): void {
  handler.configureAsyncInvoke({
    retryAttempts: FUNCTION_RETRY_ATTEMPTS,
    maxEventAge: MAXIMUM_EVENT_AGE,
    onFailure: new SqsDestination(deadLetterQueue),
  });
  new Rule(scope, `${channel}Rule`, {
    description: `countersign: ${detailTypes.join(' and ')} to the ${channel.replace('Channel', '').toLowerCase()} channel`,
    eventPattern: { source: [NOTIFICATION_EVENT_SOURCE], detailType: [...detailTypes] },
    targets: [
      new LambdaTarget(handler, {
        retryAttempts: DELIVERY_RETRY_ATTEMPTS,
        maxEventAge: MAXIMUM_EVENT_AGE,
        deadLetterQueue,
      }),
    ],
  });
}
