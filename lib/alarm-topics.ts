import type { RemovalPolicy } from 'aws-cdk-lib';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/**
 * How urgent an alarm is: `page` wakes someone (runs cannot proceed, or a security signal),
 * `ticket` is worked in office hours (one run failed, a slow trend, a quota to raise).
 */
export type AlarmSeverity = 'page' | 'ticket';

/** The SNS topics the alarms notify, one per severity (docs/runbook.md, "Alarms"). */
export interface CountersignAlarmTopics {
  /**
   * The topic of the alarms that page: subscribe the on-call rotation.
   *
   * @default - a topic created, encrypted with the alarm topics' own key, TLS only
   */
  readonly page?: ITopic;
  /**
   * The topic of the alarms that open a ticket: subscribe the team's queue.
   *
   * @default - a topic created, encrypted with the alarm topics' own key, TLS only
   */
  readonly ticket?: ITopic;
}

/**
 * The alarm topics: those given, and for each severity left out a topic created here, encrypted
 * with one customer managed key of its own (CloudWatch must be allowed to use it, which the
 * sealing key must never allow) and refusing requests without TLS.
 *
 * @example
 * const topics = createAlarmTopics(this, { page: oncall }, RemovalPolicy.RETAIN);
 * topics.ticket.addSubscription(new EmailSubscription('team@example.com'));
 */
export function createAlarmTopics(
  scope: Construct,
  given: CountersignAlarmTopics,
  removalPolicy: RemovalPolicy,
): Readonly<Record<AlarmSeverity, ITopic>> {
  let key: Key | undefined;
  const topicFor = (severity: AlarmSeverity, id: string): ITopic => {
    const topic = given[severity];
    if (topic !== undefined) return topic;
    key ??= createAlarmTopicKey(scope, removalPolicy);
    return new Topic(scope, id, {
      displayName: `countersign alarms: ${severity}`,
      masterKey: key,
      enforceSSL: true,
    });
  };
  // `AlarmTopic` keeps the id the one topic had before severities: its subscriptions stay.
  return { page: topicFor('page', 'AlarmTopic'), ticket: topicFor('ticket', 'TicketTopic') };
}

function createAlarmTopicKey(scope: Construct, removalPolicy: RemovalPolicy): Key {
  const key = new Key(scope, 'AlarmTopicKey', {
    description: 'countersign: encrypts the alarm topics',
    enableKeyRotation: true,
    removalPolicy,
  });
  key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
  return key;
}
