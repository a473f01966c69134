import type { RemovalPolicy } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Alarm, Dashboard, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { MetricName } from '../lambdas/contract/metric-names.js';
import { type CountersignAlarmThresholds, resolveAlarmThresholds } from './alarm-thresholds.js';
import {
  type ChannelAlarmName,
  type CountersignAlarmName,
  type CountersignAlarmsProps,
  createAlarmTopic,
  createCountersignAlarms,
} from './alarms.js';
import {
  type ApplicationMetricOptions,
  type ApplicationMetricReader,
  createApplicationMetricReader,
} from './application-metrics.js';
import { createCountersignDashboard } from './dashboard.js';
import type { HandlerName } from './handler-names.js';
import { scheduleWaitingRunsProbe } from './waiting-runs-probe.js';

/** Properties of {@link CountersignObservability}. */
export interface CountersignObservabilityProps {
  /** Every handler function by name; the waiting-runs probe among them. */
  readonly functions: Readonly<Record<HandlerName, IFunction>>;
  readonly stateMachine: StateMachine;
  readonly table: ITable;
  readonly httpApi: IHttpApi;
  /** The `service` dimension the Lambdas' metrics carry (POWERTOOLS_SERVICE_NAME). */
  readonly serviceName: string;
  readonly removalPolicy: RemovalPolicy;
  /**
   * Where alarms notify (and tell when they recover).
   *
   * @default - a topic encrypted with its own customer managed key, with no subscription
   */
  readonly alarmTopic?: ITopic;
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
 * state machine's, the Lambdas', DynamoDB's and the API's (lib/dashboard.ts), and alarms on an
 * SNS topic (lib/alarms.ts), each explained in docs/runbook.md. A scheduled probe measures how
 * long runs wait (lib/waiting-runs-probe.ts), because nothing runs while a run waits.
 *
 * @example
 * const observability = new CountersignObservability(this, 'Observability', {
 *   functions, stateMachine, table, httpApi, serviceName: 'countersign', removalPolicy,
 * });
 * observability.alarmTopic.addSubscription(new EmailSubscription('oncall@example.com'));
 */
export class CountersignObservability extends Construct {
  /** The dashboard; undefined when the `dashboard` prop is false. */
  public readonly dashboard?: Dashboard;
  public readonly alarmTopic: ITopic;
  /** Every alarm, by the name the runbook uses (a channel's only when it is on). */
  public readonly alarms: Readonly<
    Record<CountersignAlarmName, Alarm> & Partial<Record<ChannelAlarmName, Alarm>>
  >;
  /** The probe schedule's undelivered events (encrypted, TLS only); `ProbeDeadLetters` alarms on it. */
  public readonly probeDeadLetterQueue: Queue;

  private readonly readMetric: ApplicationMetricReader;

  public constructor(scope: Construct, id: string, props: CountersignObservabilityProps) {
    super(scope, id);
    this.readMetric = createApplicationMetricReader(props.serviceName);
    const thresholds = resolveAlarmThresholds(this, props.alarmThresholds);
    this.alarmTopic = props.alarmTopic ?? createAlarmTopic(this, props.removalPolicy);
    this.probeDeadLetterQueue = scheduleWaitingRunsProbe(
      this,
      props.functions['report-waiting-runs'],
      props.removalPolicy,
    );
    this.alarms = createCountersignAlarms(this, {
      ...props,
      alarmTopic: this.alarmTopic,
      probeDeadLetterQueue: this.probeDeadLetterQueue,
      thresholds,
      metric: this.readMetric,
    });
    if (props.dashboard === false) return;
    this.dashboard = createCountersignDashboard(this, {
      ...props,
      alarms: this.alarms,
      metric: this.readMetric,
    });
  }

  /** One of countersign's own metrics, with this deployment's `service` dimension. */
  public metric(name: MetricName, options: ApplicationMetricOptions = {}): Metric {
    return this.readMetric(name, options);
  }
}
