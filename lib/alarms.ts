import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
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
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import type { CountersignAlarmThresholds } from './alarm-thresholds.js';
import type { ApplicationMetricReader } from './application-metrics.js';
import { HANDLER_NAMES, type HandlerName } from './handler-names.js';
import { WAITING_RUNS_PROBE_INTERVAL } from './waiting-runs-probe.js';

/**
 * Counts that alarm at the first occurrence in a 5-minute period: a failed execution, a
 * Lambda error or throttle, a DynamoDB throttle or system error, an API 5XX, a checksum
 * mismatch. countersign never answers a client's input with a 500, so each one is news.
 */
export const ALARM_ON_FIRST_OCCURRENCE = 1;

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
const API_HANDLERS: readonly HandlerName[] = HANDLER_NAMES.filter((name) => name.startsWith('api-'));
const STEP_HANDLERS: readonly HandlerName[] = HANDLER_NAMES.filter((name) => !name.startsWith('api-'));

/** The alarms that raise at the first occurrence in 5 minutes. */
type FirstOccurrenceAlarmName =
  | 'ExecutionsFailed'
  | 'ExecutionsTimedOut'
  | 'ExecutionsThrottled'
  | 'StepLambdaErrors'
  | 'StepLambdaThrottles'
  | 'ApiLambdaErrors'
  | 'ApiLambdaThrottles'
  | 'DynamoDbThrottles'
  | 'DynamoDbSystemErrors'
  | 'Api5xx'
  | 'SkillChecksumMismatch'
  | 'SealedStateRejected'
  | 'ProbeDeadLetters'
  | 'ChannelDeliveryFailed';

/** The alarms of the notification channels a team switched on (`channels` props): none without them. */
export type ChannelAlarmName = 'ChannelDeadLetters' | 'ChannelLambdaErrors';

/** The alarms of countersign, by the names docs/runbook.md explains them under. */
export type CountersignAlarmName =
  | FirstOccurrenceAlarmName
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
  readonly alarmTopic: ITopic;
  readonly thresholds: Required<CountersignAlarmThresholds>;
  /** Where each alarm's description links to, followed by `#<alarm name in lower case>`. */
  readonly runbookUrl: string;
  readonly metric: ApplicationMetricReader;
  /** The channels that are on: their functions and dead-letter queues. @default - none */
  readonly channels?: {
    readonly functions: readonly IFunction[];
    readonly deadLetterQueues: readonly IQueue[];
  };
}

interface AlarmCondition {
  readonly threshold: number;
  readonly comparisonOperator: ComparisonOperator;
  readonly evaluationPeriods: number;
  readonly description: string;
}

/**
 * countersign's alarms, each notifying `alarmTopic` when it fires and when it recovers, each
 * explained in docs/runbook.md under its name in lower case.
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
  const createAlarm = (
    id: CountersignAlarmName | ChannelAlarmName,
    watched: IMetric,
    condition: AlarmCondition,
  ): Alarm => {
    const alarm = new Alarm(scope, id, {
      metric: watched,
      threshold: condition.threshold,
      comparisonOperator: condition.comparisonOperator,
      evaluationPeriods: condition.evaluationPeriods,
      alarmDescription: `${condition.description} Runbook: ${props.runbookUrl}#${id.toLowerCase()}`,
      // No data means nothing happened: no failure, no run, no request.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(props.alarmTopic));
    alarm.addOkAction(new SnsAction(props.alarmTopic));
    return alarm;
  };
  const everyFiveMinutes = { period: Duration.minutes(5) };
  // The errors and the throttles of a group of handlers, each summed into one alarm.
  const handlerGroupAlarms = <Group extends 'Step' | 'Api'>(
    group: Group,
    names: readonly HandlerName[],
    meaning: { errors: string; throttles: string },
  ): Record<`${Group}LambdaErrors` | `${Group}LambdaThrottles`, [IMetric, string]> => {
    const label = group === 'Api' ? 'API' : group;
    const handlers = names.map((name) => props.functions[name]);
    return {
      [`${group}LambdaErrors`]: [
        sumOf(
          `${label} Lambda errors`,
          handlers.map((handler) => handler.metricErrors()),
        ),
        meaning.errors,
      ],
      [`${group}LambdaThrottles`]: [
        sumOf(
          `${label} Lambda throttles`,
          handlers.map((handler) => handler.metricThrottles()),
        ),
        meaning.throttles,
      ],
    } as Record<`${Group}LambdaErrors` | `${Group}LambdaThrottles`, [IMetric, string]>;
  };

  // [what is counted, what its first occurrence means]
  const firstOccurrences: Record<FirstOccurrenceAlarmName, [IMetric, string]> = {
    ExecutionsFailed: [
      props.stateMachine.metricFailed(everyFiveMinutes),
      'A run execution failed outside the run (MarkFailed itself failed, or a definition error).',
    ],
    ExecutionsTimedOut: [
      props.stateMachine.metricTimedOut(everyFiveMinutes),
      'A run execution timed out as a whole.',
    ],
    ExecutionsThrottled: [
      props.stateMachine.metricThrottled(everyFiveMinutes),
      'Step Functions throttled state transitions or StartExecution.',
    ],
    ...handlerGroupAlarms('Step', STEP_HANDLERS, {
      errors: 'A state machine step or the waiting-runs probe threw or timed out.',
      throttles: 'Lambda throttled a state machine step or the probe.',
    }),
    ...handlerGroupAlarms('Api', API_HANDLERS, {
      errors: 'An API Lambda crashed or timed out (an error response is not a Lambda error).',
      throttles: 'Lambda throttled an API Lambda.',
    }),
    DynamoDbThrottles: [
      props.table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, ...everyFiveMinutes }),
      'DynamoDB throttled requests to the countersign table.',
    ],
    DynamoDbSystemErrors: [
      props.table.metricSystemErrorsForOperations({ operations: TABLE_OPERATIONS, ...everyFiveMinutes }),
      'DynamoDB answered requests to the countersign table with a 500.',
    ],
    Api5xx: [
      props.httpApi.metricServerError({ ...everyFiveMinutes, statistic: 'Sum' }),
      'The HTTP API answered 5XX.',
    ],
    SkillChecksumMismatch: [
      metric('SkillChecksumMismatches', everyFiveMinutes),
      'A stored skill body no longer matches its reviewed checksum; it was skipped.',
    ],
    SealedStateRejected: [
      metric('SealedStateRejections', everyFiveMinutes),
      'A sealed run state, approval card or task token was refused (tampered, or copied from another run); its run was ended.',
    ],
    ProbeDeadLetters: [
      props.probeDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        ...everyFiveMinutes,
        statistic: 'Maximum',
      }),
      'EventBridge could not deliver the waiting-runs probe; the undelivered events are in its dead-letter queue.',
    ],
    ChannelDeliveryFailed: [
      sumOf('Channel delivery failures', [
        metric('ChannelDeliveryFailures', { dimensions: { channel: 'slack' } }),
        metric('ChannelDeliveryFailures', { dimensions: { channel: 'email' } }),
        metric('CardEventFailures'),
      ]),
      'A Slack message or a mail could not be delivered, or a Card Closed event could not be put; decisions are not affected.',
    ],
  };
  const firstOccurrenceAlarms = Object.fromEntries(
    Object.entries(firstOccurrences).map(([id, [watched, description]]) => [
      id,
      createAlarm(id as FirstOccurrenceAlarmName, watched, {
        threshold: ALARM_ON_FIRST_OCCURRENCE,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        description,
      }),
    ]),
  ) as Record<FirstOccurrenceAlarmName, Alarm>;

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
  const channels = props.channels;
  const channelAlarms: Partial<Record<ChannelAlarmName, Alarm>> =
    channels === undefined || channels.functions.length === 0
      ? {}
      : {
          ChannelDeadLetters: createAlarm(
            'ChannelDeadLetters',
            sumOf(
              'Channel dead letters',
              channels.deadLetterQueues.map((queue) =>
                queue.metricApproximateNumberOfMessagesVisible({ ...everyFiveMinutes, statistic: 'Maximum' }),
              ),
            ),
            {
              threshold: ALARM_ON_FIRST_OCCURRENCE,
              comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
              evaluationPeriods: 1,
              description:
                'A notification channel gave up on an event after its retries; the event is in the channel’s dead-letter queue.',
            },
          ),
          ChannelLambdaErrors: createAlarm(
            'ChannelLambdaErrors',
            sumOf(
              'Channel Lambda errors',
              channels.functions.map((handler) => handler.metricErrors()),
            ),
            {
              threshold: ALARM_ON_FIRST_OCCURRENCE,
              comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
              evaluationPeriods: 1,
              description: 'A notification channel’s function threw or timed out (it will be retried).',
            },
          ),
        };
  return {
    ...firstOccurrenceAlarms,
    ...channelAlarms,
    ApiLatencyP99: createAlarm(
      'ApiLatencyP99',
      props.httpApi.metricLatency({ ...everyFiveMinutes, statistic: 'p99' }),
      {
        threshold: thresholds.apiLatencyP99.toMilliseconds(),
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        description: `The HTTP API's p99 latency stayed above ${thresholds.apiLatencyP99.toHumanString()} for 15 minutes.`,
      },
    ),
    PreviewFailureRate: createAlarm('PreviewFailureRate', previewFailurePercent, {
      threshold: thresholds.previewFailurePercent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      description: `More than ${thresholds.previewFailurePercent} % of the previews captured in 15 minutes failed.`,
    }),
    SealedStateNearItemLimit: createAlarm('SealedStateNearItemLimit', largestSealed, {
      threshold: thresholds.sealedBytes,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      description: `A sealed run state or approval card of ${thresholds.sealedBytes} bytes or more was written (DynamoDB items stop at 400 KB).`,
    }),
    RunWaitingTooLong: createAlarm(
      'RunWaitingTooLong',
      metric('OldestWaitingRunAge', { statistic: 'Maximum', period: WAITING_RUNS_PROBE_INTERVAL }),
      {
        threshold: thresholds.runWaitingLongerThan.toMilliseconds(),
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        description: `A run has waited for a decision longer than ${thresholds.runWaitingLongerThan.toHumanString()}.`,
      },
    ),
  };
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

/** The alarm topic the construct creates when none is given: encrypted with its own key. */
export function createAlarmTopic(scope: Construct, removalPolicy: RemovalPolicy): ITopic {
  // Its own key: CloudWatch must be allowed to use it, which the sealing key must never allow.
  const key = new Key(scope, 'AlarmTopicKey', {
    description: 'countersign: encrypts the alarm topic',
    enableKeyRotation: true,
    removalPolicy,
  });
  key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
  return new Topic(scope, 'AlarmTopic', {
    displayName: 'countersign alarms',
    masterKey: key,
    enforceSSL: true,
  });
}
