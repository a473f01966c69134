import type { RemovalPolicy } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Alarm, Dashboard, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { CfnQueryDefinition } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { MetricName } from '../lambdas/core/metric-names.js';
import { type CountersignAlarmThresholds, resolveAlarmThresholds } from './alarm-thresholds.js';
import { type CountersignAlarmTopics, createAlarmTopics } from './alarm-topics.js';
import {
  type ChannelAlarmName,
  type CountersignAlarmName,
  type CountersignAlarmsProps,
  createCountersignAlarms,
} from './alarms.js';
import {
  type ApplicationMetricOptions,
  type ApplicationMetricReader,
  createApplicationMetricReader,
} from './application-metrics.js';
import { createCountersignDashboard } from './dashboard.js';
import { HANDLER_NAMES, type HandlerName } from './handler-names.js';
import { FUNCTION_GROUPS } from './limits.js';
import { createSavedLogQueries } from './log-queries.js';
import { scheduleWaitingRunsProbe } from './waiting-runs-probe.js';

/** Properties of {@link CountersignObservability}. */
export interface CountersignObservabilityProps {
  /** Every handler function by name; the waiting-runs probe among them. */
  readonly functions: Readonly<Record<HandlerName, LambdaFunction>>;
  readonly stateMachine: StateMachine;
  readonly table: ITable;
  readonly httpApi: IHttpApi;
  /** The `service` dimension the Lambdas' metrics carry (POWERTOOLS_SERVICE_NAME). */
  readonly serviceName: string;
  readonly removalPolicy: RemovalPolicy;
  /**
   * Where alarms notify (and tell when they recover), by severity.
   *
   * @default - a topic per severity, encrypted with their own customer managed key, with no subscription
   */
  readonly alarmTopics?: CountersignAlarmTopics;
  /** @default - {@link ALARM_THRESHOLD_DEFAULTS} */
  readonly alarmThresholds?: CountersignAlarmThresholds;
  /** Where each alarm's description links to, followed by `#<alarm name in lower case>`. */
  readonly runbookUrl: string;
  /**
   * Whether to create the CloudWatch dashboard (about $3 a month); the alarms exist either way.
   *
   * @default true
   */
  readonly dashboard?: boolean;
  /**
   * The notification channels that are on: their functions and dead-letter queues alarm.
   *
   * @default - none
   */
  readonly channels?: CountersignAlarmsProps['channels'];
}

/**
 * What an on-call engineer needs: one dashboard with countersign's own metrics beside the
 * state machine's, the Lambdas', DynamoDB's and the API's, and the spend estimate
 * (lib/dashboard.ts, lib/spend-estimate.ts); named alarms of two severities, each on its
 * severity's SNS topic (lib/alarms.ts, lib/alarm-topics.ts), and the runbook's investigations
 * as saved Logs Insights queries (lib/log-queries.ts), each explained in docs/runbook.md. A
 * scheduled probe measures how long runs wait (lib/waiting-runs-probe.ts), because nothing runs
 * while a run waits.
 *
 * @example
 * const observability = new CountersignObservability(this, 'Observability', {
 *   functions, stateMachine, table, httpApi, serviceName: 'countersign', removalPolicy,
 * });
 * observability.pageTopic.addSubscription(new EmailSubscription('oncall@example.com'));
 */
export class CountersignObservability extends Construct {
  /** The dashboard; undefined when the `dashboard` prop is false. */
  public readonly dashboard?: Dashboard;
  /** Where the alarms that page notify: subscribe the on-call rotation. */
  public readonly pageTopic: ITopic;
  /** Where the alarms that open a ticket notify: subscribe the team's queue. */
  public readonly ticketTopic: ITopic;
  /** Every alarm, by the name the runbook uses (a channel's only when it is on). */
  public readonly alarms: Readonly<
    Record<CountersignAlarmName, Alarm> & Partial<Record<ChannelAlarmName, Alarm>>
  >;
  /** The runbook's saved Logs Insights queries, by the name the runbook uses. */
  public readonly logQueries: Readonly<Record<string, CfnQueryDefinition>>;
  /** The probe schedule's undelivered events (encrypted, TLS only); `ProbeDeadLetters` alarms on it. */
  public readonly probeDeadLetterQueue: Queue;

  private readonly readMetric: ApplicationMetricReader;

  public constructor(scope: Construct, id: string, props: CountersignObservabilityProps) {
    super(scope, id);
    this.readMetric = createApplicationMetricReader(props.serviceName);
    const thresholds = resolveAlarmThresholds(this, props.alarmThresholds);
    const topics = createAlarmTopics(this, props.alarmTopics ?? {}, props.removalPolicy);
    this.pageTopic = topics.page;
    this.ticketTopic = topics.ticket;
    this.probeDeadLetterQueue = scheduleWaitingRunsProbe(
      this,
      props.functions['report-waiting-runs'],
      props.removalPolicy,
    );
    this.alarms = createCountersignAlarms(this, {
      ...props,
      topics,
      probeDeadLetterQueue: this.probeDeadLetterQueue,
      thresholds,
      alarmNamePrefix: props.serviceName,
      metric: this.readMetric,
    });
    this.logQueries = createSavedLogQueries(this, {
      prefix: props.serviceName,
      logGroups: mapHandlers(props.functions, (handler) => handler.logGroup),
    });
    if (props.dashboard === false) return;
    this.dashboard = createCountersignDashboard(this, {
      ...props,
      alarms: this.alarms,
      metric: this.readMetric,
      stepHandlers: HANDLER_NAMES.filter((name) => FUNCTION_GROUPS[name] === 'steps'),
    });
  }

  /** One of countersign's own metrics, with this deployment's `service` dimension. */
  public metric(name: MetricName, options: ApplicationMetricOptions = {}): Metric {
    return this.readMetric(name, options);
  }
}

/** Each handler's value of `read`, by handler name. */
function mapHandlers<Value>(
  functions: Readonly<Record<HandlerName, LambdaFunction>>,
  read: (handler: LambdaFunction) => Value,
): Record<HandlerName, Value> {
  return Object.fromEntries(
    Object.entries(functions).map(([name, handler]) => [name, read(handler)]),
  ) as Record<HandlerName, Value>;
}
