import { Duration } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  MathExpression,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { type ITable, Operation } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import type { CountersignAlarmThresholds } from './alarm-thresholds.js';
import type { AlarmSeverity } from './alarm-topics.js';
import type { ApplicationMetricReader } from './application-metrics.js';
import { HANDLER_NAMES, type HandlerName } from './handler-names.js';
import { WAITING_RUNS_PROBE_INTERVAL } from './waiting-runs-probe.js';

/**
 * The threshold of the count alarms: one occurrence in a period breaches it. Whether that pages
 * depends on how many periods must breach (below): a security signal pages at once, an error
 * only when it keeps happening, a throttle (retried by design) never.
 */
export const ALARM_ON_FIRST_OCCURRENCE = 1;

/** How many of the last N periods must breach (M of N, `DatapointsToAlarm` of `EvaluationPeriods`). */
interface Datapoints {
  readonly datapointsToAlarm: number;
  readonly evaluationPeriods: number;
}

/** One breaching period is enough: security signals, and a ticket for each single event. */
const AT_ONCE: Datapoints = { datapointsToAlarm: 1, evaluationPeriods: 1 };
/** Two of the last three periods: a failure that is still happening ten minutes on. */
const REPEATED: Datapoints = { datapointsToAlarm: 2, evaluationPeriods: 3 };
/** Three of the last five periods: a failure that outlasts every retry and backoff. */
const SUSTAINED: Datapoints = { datapointsToAlarm: 3, evaluationPeriods: 5 };

/** CloudWatch: an alarm on metric math reads at most 10 metrics. */
const MAXIMUM_ALARM_METRICS = 10;

/** The table operations countersign uses; alarms on metric math allow at most 10 metrics. */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.QUERY,
  Operation.BATCH_GET_ITEM,
  Operation.BATCH_WRITE_ITEM,
];

// API handlers by name, every other one (steps, probe) apart: each group's math stays within the
// 10 metrics an alarm may read, and a handler added later is covered without an edit here.
// The handlers of external runs (docs/external-agents.md) are a group of their own.
const EXTERNAL_HANDLERS: readonly HandlerName[] = [
  'api-external',
  'record-external-decision',
  'notify-caller',
];
const API_HANDLERS: readonly HandlerName[] = HANDLER_NAMES.filter(
  (name) => name.startsWith('api-') && !EXTERNAL_HANDLERS.includes(name),
);
const STEP_HANDLERS: readonly HandlerName[] = HANDLER_NAMES.filter(
  (name) => !name.startsWith('api-') && !EXTERNAL_HANDLERS.includes(name),
);

/** The alarms that count occurrences (threshold {@link ALARM_ON_FIRST_OCCURRENCE}). */
type CountAlarmName =
  | 'ExecutionsFailed'
  | 'ExecutionsTimedOut'
  | 'ExecutionsThrottled'
  | 'StepLambdaErrors'
  | 'StepLambdaThrottles'
  | 'ApiLambdaErrors'
  | 'ApiLambdaThrottles'
  | 'ExternalLambdaErrors'
  | 'ExternalLambdaThrottles'
  | 'DynamoDbThrottles'
  | 'DynamoDbSystemErrors'
  | 'Api5xx'
  | 'SkillChecksumMismatch'
  | 'SealedStateRejected'
  | 'DecisionsUndelivered'
  | 'ProbeDeadLetters'
  | 'ModelErrors'
  | 'ModelThrottles'
  | 'ChannelDeliveryFailed';

/** The alarms of the notification channels a team switched on (`channels` props): none without them. */
export type ChannelAlarmName = 'ChannelDeadLetters' | 'ChannelLambdaErrors';

/** The alarms of countersign, by the names docs/runbook.md explains them under. */
export type CountersignAlarmName =
  | CountAlarmName
  | 'ApiLatencyP99'
  | 'PreviewFailureRate'
  | 'SealedStateNearItemLimit'
  | 'RunWaitingTooLong';

/** What {@link createCountersignAlarms} watches and where it notifies. */
export interface CountersignAlarmsProps {
  readonly functions: Readonly<Record<HandlerName, IFunction>>;
  readonly stateMachine: IStateMachine;
  readonly table: ITable;
  readonly httpApi: IHttpApi;
  /** The waiting-runs probe schedule's dead-letter queue. */
  readonly probeDeadLetterQueue: IQueue;
  /** The topic of each severity. */
  readonly topics: Readonly<Record<AlarmSeverity, ITopic>>;
  readonly thresholds: Required<CountersignAlarmThresholds>;
  /** Where each alarm's description links to, followed by `#<alarm name in lower case>`. */
  readonly runbookUrl: string;
  /** Every alarm is named `<prefix>-<alarm name>` (the deployment's service name). */
  readonly alarmNamePrefix: string;
  readonly metric: ApplicationMetricReader;
  /** The channels that are on: their functions and dead-letter queues. @default - none */
  readonly channels?: {
    readonly functions: readonly IFunction[];
    readonly deadLetterQueues: readonly IQueue[];
  };
}

/** One alarm: what it watches, when it fires, how urgent it is and what it means. */
interface AlarmRule extends Datapoints {
  readonly severity: AlarmSeverity;
  readonly watched: IMetric;
  readonly threshold: number;
  readonly comparisonOperator: ComparisonOperator;
  readonly description: string;
}

/** A count alarm: one occurrence in a period breaches. */
function countRule(
  severity: AlarmSeverity,
  watched: IMetric,
  datapoints: Datapoints,
  description: string,
): AlarmRule {
  return {
    severity,
    watched,
    threshold: ALARM_ON_FIRST_OCCURRENCE,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    ...datapoints,
    description,
  };
}

/**
 * countersign's alarms, each named `<prefix>-<alarm>`, notifying its severity's topic when it
 * fires and when it recovers, and explained in docs/runbook.md under its name in lower case.
 *
 * @example
 * const alarms = createCountersignAlarms(this, { functions, stateMachine, table, httpApi, ... });
 * alarms.RunWaitingTooLong.alarmArn;
 */
export function createCountersignAlarms(
  scope: Construct,
  props: CountersignAlarmsProps,
): Record<CountersignAlarmName, Alarm> & Partial<Record<ChannelAlarmName, Alarm>> {
  const { thresholds, metric } = props;
  const everyFiveMinutes = { period: Duration.minutes(5) };
  // The errors or the throttles of a group of handlers, summed.
  const sumOfHandlers = (
    label: string,
    names: readonly HandlerName[],
    read: (handler: IFunction) => IMetric,
  ): IMetric =>
    sumOf(
      label,
      names.map((name) => read(props.functions[name])),
    );

  const counts: Record<CountAlarmName, AlarmRule> = {
    // Every failed run fails its execution (MarkFailed, then RunFailed): a ticket to look at it
    // and redrive it when its failure was transient; runs failing in numbers page as step errors.
    ExecutionsFailed: countRule(
      'ticket',
      props.stateMachine.metricFailed(everyFiveMinutes),
      AT_ONCE,
      'A run failed (its execution ended in RunFailed), or MarkFailed itself failed.',
    ),
    ExecutionsTimedOut: countRule(
      'ticket',
      props.stateMachine.metricTimedOut(everyFiveMinutes),
      AT_ONCE,
      'A run execution timed out as a whole.',
    ),
    ExecutionsThrottled: countRule(
      'ticket',
      props.stateMachine.metricThrottled(everyFiveMinutes),
      REPEATED,
      'Step Functions kept throttling state transitions or StartExecution.',
    ),
    StepLambdaErrors: countRule(
      'page',
      sumOfHandlers('Step Lambda errors', STEP_HANDLERS, (handler) => handler.metricErrors()),
      SUSTAINED,
      'State machine steps (or the waiting-runs probe) kept throwing or timing out past their retries.',
    ),
    StepLambdaThrottles: countRule(
      'ticket',
      sumOfHandlers('Step Lambda throttles', STEP_HANDLERS, (handler) => handler.metricThrottles()),
      SUSTAINED,
      'Lambda kept throttling state machine steps or the probe (the state machine retries them).',
    ),
    ApiLambdaErrors: countRule(
      'page',
      sumOfHandlers('API Lambda errors', API_HANDLERS, (handler) => handler.metricErrors()),
      REPEATED,
      'API Lambdas kept crashing or timing out (an error response is not a Lambda error).',
    ),
    ApiLambdaThrottles: countRule(
      'ticket',
      sumOfHandlers('API Lambda throttles', API_HANDLERS, (handler) => handler.metricThrottles()),
      REPEATED,
      'Lambda kept throttling API Lambdas.',
    ),
    ExternalLambdaErrors: countRule(
      'page',
      sumOfHandlers('External Lambda errors', EXTERNAL_HANDLERS, (handler) => handler.metricErrors()),
      SUSTAINED,
      'The Lambdas of external runs (the approval API, the answer, the webhook) kept crashing or timing out.',
    ),
    ExternalLambdaThrottles: countRule(
      'ticket',
      sumOfHandlers('External Lambda throttles', EXTERNAL_HANDLERS, (handler) => handler.metricThrottles()),
      SUSTAINED,
      'Lambda kept throttling the Lambdas of external runs (long polls hold theirs for up to 25 s).',
    ),
    DynamoDbThrottles: countRule(
      'ticket',
      props.table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, ...everyFiveMinutes }),
      REPEATED,
      'DynamoDB kept throttling requests to the countersign table (the SDK retries them).',
    ),
    DynamoDbSystemErrors: countRule(
      'page',
      props.table.metricSystemErrorsForOperations({ operations: TABLE_OPERATIONS, ...everyFiveMinutes }),
      REPEATED,
      'DynamoDB kept answering requests to the countersign table with a 500.',
    ),
    Api5xx: countRule(
      'page',
      props.httpApi.metricServerError({ ...everyFiveMinutes, statistic: 'Sum' }),
      REPEATED,
      'The HTTP API kept answering 5XX.',
    ),
    SkillChecksumMismatch: countRule(
      'page',
      metric('SkillChecksumMismatches', everyFiveMinutes),
      AT_ONCE,
      'A stored skill body no longer matches its reviewed checksum; it was skipped.',
    ),
    SealedStateRejected: countRule(
      'page',
      metric('SealedStateRejections', everyFiveMinutes),
      AT_ONCE,
      'A sealed run state, approval card or task token was refused (tampered, or copied from another run); its run was ended.',
    ),
    // A decided run still waits: the probe could not deliver its claim either (it tried). Each
    // probe tries again, so one probe that failed transiently wakes nobody; two of three do.
    DecisionsUndelivered: countRule(
      'page',
      metric('UndeliveredDecisions', everyFiveMinutes),
      REPEATED,
      'A claimed decision older than a minute could not be delivered by the waiting-runs probe; its run still waits.',
    ),
    ProbeDeadLetters: countRule(
      'ticket',
      props.probeDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        ...everyFiveMinutes,
        statistic: 'Maximum',
      }),
      AT_ONCE,
      'EventBridge could not deliver the waiting-runs probe; the undelivered events are in its dead-letter queue.',
    ),
    ModelErrors: countRule(
      'page',
      metric('ModelErrors', everyFiveMinutes),
      SUSTAINED,
      'Model calls kept failing past the adapter’s retries (a provider outage, a revoked key): runs fail.',
    ),
    ModelThrottles: countRule(
      'ticket',
      metric('ModelThrottles', everyFiveMinutes),
      SUSTAINED,
      'The model provider kept throttling requests (retried by the adapter): raise its quota.',
    ),
    // A channel takes part in no decision: a ticket, once a failure outlasts the first retries.
    ChannelDeliveryFailed: countRule(
      'ticket',
      sumOf('Channel delivery failures', [
        metric('ChannelDeliveryFailures', { ...everyFiveMinutes, dimensions: { channel: 'slack' } }),
        metric('ChannelDeliveryFailures', { ...everyFiveMinutes, dimensions: { channel: 'email' } }),
        metric('CardEventFailures', everyFiveMinutes),
      ]),
      REPEATED,
      'Slack messages or mails kept failing, or Card Closed events could not be put; decisions are not affected.',
    ),
  };

  const previewFailurePercent = new MathExpression({
    label: 'Preview failure rate (%)',
    expression: 'IF(captured > 0, 100 * failed / captured, 0)',
    usingMetrics: {
      captured: metric('PreviewsCaptured', { period: Duration.minutes(15) }),
      failed: metric('PreviewsFailed', { period: Duration.minutes(15) }),
    },
    period: Duration.minutes(15),
  });
  const largestSealed = new MathExpression({
    label: 'Largest sealed write (bytes)',
    expression: 'MAX([state, card])',
    usingMetrics: {
      state: metric('SealedStateBytes', { statistic: 'Maximum' }),
      card: metric('SealedCardBytes', { statistic: 'Maximum' }),
    },
    period: Duration.minutes(5),
  });
  const rules: Record<CountersignAlarmName, AlarmRule> = {
    ...counts,
    ApiLatencyP99: {
      severity: 'ticket',
      watched: props.httpApi.metricLatency({ ...everyFiveMinutes, statistic: 'p99' }),
      threshold: thresholds.apiLatencyP99.toMilliseconds(),
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      datapointsToAlarm: 3,
      evaluationPeriods: 3,
      description: `The HTTP API's p99 latency stayed above ${thresholds.apiLatencyP99.toHumanString()} for 15 minutes.`,
    },
    PreviewFailureRate: {
      severity: 'ticket',
      watched: previewFailurePercent,
      threshold: thresholds.previewFailurePercent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      ...AT_ONCE,
      description: `More than ${thresholds.previewFailurePercent} % of the previews captured in 15 minutes failed.`,
    },
    SealedStateNearItemLimit: {
      severity: 'ticket',
      watched: largestSealed,
      threshold: thresholds.sealedBytes,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      ...AT_ONCE,
      description: `A sealed run state or approval card of ${thresholds.sealedBytes} bytes or more was written (DynamoDB items stop at 400 KB).`,
    },
    RunWaitingTooLong: {
      severity: 'ticket',
      watched: metric('OldestWaitingRunAge', { statistic: 'Maximum', period: WAITING_RUNS_PROBE_INTERVAL }),
      threshold: thresholds.runWaitingLongerThan.toMilliseconds(),
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      ...AT_ONCE,
      description: `A run has waited for a decision longer than ${thresholds.runWaitingLongerThan.toHumanString()}.`,
    },
  };
  const channels = props.channels;
  const channelRules: Partial<Record<ChannelAlarmName, AlarmRule>> =
    channels === undefined || channels.functions.length === 0
      ? {}
      : {
          ChannelDeadLetters: countRule(
            'ticket',
            sumOf(
              'Channel dead letters',
              channels.deadLetterQueues.map((queue) =>
                queue.metricApproximateNumberOfMessagesVisible({ ...everyFiveMinutes, statistic: 'Maximum' }),
              ),
            ),
            AT_ONCE,
            'A notification channel gave up on an event after its retries; the event is in the channel’s dead-letter queue.',
          ),
          ChannelLambdaErrors: countRule(
            'ticket',
            sumOf(
              'Channel Lambda errors',
              channels.functions.map((handler) => handler.metricErrors()),
            ),
            SUSTAINED,
            'A notification channel’s functions kept throwing or timing out (events are retried, then dead-lettered).',
          ),
        };
  return Object.fromEntries(
    Object.entries({ ...rules, ...channelRules }).map(([id, rule]) => [
      id,
      createAlarm(scope, id as CountersignAlarmName | ChannelAlarmName, rule, props),
    ]),
  ) as Record<CountersignAlarmName, Alarm> & Partial<Record<ChannelAlarmName, Alarm>>;
}

/** The alarm of one rule, named and linked to its runbook entry, on its severity's topic. */
function createAlarm(
  scope: Construct,
  id: CountersignAlarmName | ChannelAlarmName,
  rule: AlarmRule,
  props: Pick<CountersignAlarmsProps, 'topics' | 'runbookUrl' | 'alarmNamePrefix'>,
): Alarm {
  const alarm = new Alarm(scope, id, {
    alarmName: `${props.alarmNamePrefix}-${id}`,
    metric: rule.watched,
    threshold: rule.threshold,
    comparisonOperator: rule.comparisonOperator,
    evaluationPeriods: rule.evaluationPeriods,
    datapointsToAlarm: rule.datapointsToAlarm,
    alarmDescription: `[${rule.severity}] ${rule.description} Runbook: ${props.runbookUrl}#${id.toLowerCase()}`,
    // No data means nothing happened: no failure, no run, no request.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const topic = new SnsAction(props.topics[rule.severity]);
  alarm.addAlarmAction(topic);
  alarm.addOkAction(topic);
  return alarm;
}

function sumOf(label: string, metrics: IMetric[]): MathExpression {
  if (metrics.length > MAXIMUM_ALARM_METRICS) {
    throw new Error(
      `CountersignObservability: "${label}" would read ${metrics.length} metrics; a CloudWatch alarm reads at most ${MAXIMUM_ALARM_METRICS}. Split the handler group in lib/alarms.ts.`,
    );
  }
  return new MathExpression({
    label,
    expression: metrics.map((_, index) => `m${index}`).join(' + '),
    usingMetrics: Object.fromEntries(metrics.map((metric, index) => [`m${index}`, metric])),
    period: Duration.minutes(5),
  });
}
