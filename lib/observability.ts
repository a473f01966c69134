import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { type ITable, Operation } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct, type IConstruct } from 'constructs';
import { COUNTERSIGN_METRICS_NAMESPACE } from '../lambdas/adapters/metrics-namespace.js';
import { HANDLER_NAMES, type HandlerName } from './functions.js';
import { invalidProp } from './validation-error.js';

/** The thresholds of countersign's alarms; every one is documented in docs/runbook.md. */
export interface CountersignAlarmThresholds {
  /**
   * A run waiting for a decision longer than this raises `RunWaitingTooLong`.
   *
   * @default - Duration.hours(24)
   */
  readonly runWaitingLongerThan?: Duration;
  /**
   * The HTTP API's p99 latency over three 5-minute periods above this raises `ApiLatencyP99`.
   *
   * @default - Duration.seconds(5)
   */
  readonly apiLatencyP99?: Duration;
  /**
   * The share of previews that failed in a 15-minute window, in percent (0-100).
   *
   * @default - 20
   */
  readonly previewFailurePercent?: number;
  /**
   * The largest sealed state or approval card written, in bytes, that raises
   * `SealedStateNearItemLimit`. The default is where run state overflows to S3, 75 % of
   * DynamoDB's 400 KB item limit.
   *
   * @default - 300000
   */
  readonly sealedBytes?: number;
}

/** The defaults of {@link CountersignAlarmThresholds}. */
export const ALARM_THRESHOLD_DEFAULTS = {
  runWaitingLongerThan: Duration.hours(24),
  apiLatencyP99: Duration.seconds(5),
  previewFailurePercent: 20,
  sealedBytes: 300_000,
} as const;

/**
 * Counts that alarm at the first occurrence in a 5-minute period: a failed execution, a
 * Lambda error or throttle, a DynamoDB throttle or system error, an API 5XX, a checksum
 * mismatch. countersign never answers a client's input with a 500, so each one is news.
 */
export const ALARM_ON_FIRST_OCCURRENCE = 1;

/** CloudWatch: an alarm on metric math reads at most 10 metrics. */
const MAXIMUM_ALARM_METRICS = 10;

/** How often EventBridge retries a probe delivery it could not make (a throttled or missing function). */
const PROBE_DELIVERY_RETRY_ATTEMPTS = 3;

/** How often the waiting-runs probe measures the approval backlog. */
export const WAITING_RUNS_PROBE_INTERVAL = Duration.minutes(5);

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

/** The alarms of countersign, by the names docs/runbook.md explains them under. */
export type CountersignAlarmName =
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
  | 'ApiLatencyP99'
  | 'PreviewFailureRate'
  | 'SkillChecksumMismatch'
  | 'SealedStateNearItemLimit'
  | 'SealedStateRejected'
  | 'RunWaitingTooLong'
  | 'ProbeDeadLetters';

/** The application metrics the core emits (EMF), by name. */
export const APPLICATION_METRICS = [
  'RunsStarted',
  'RunsCompleted',
  'RunsFailed',
  'RunsExpired',
  'RunsCancelled',
  'RunsSuspended',
  'Decisions',
  'PauseToDecision',
  'PreviewsCaptured',
  'PreviewsFailed',
  'PreviewsWithheld',
  'SkillsDropped',
  'SkillChecksumMismatches',
  'SealedStateBytes',
  'SealedCardBytes',
  'StaleDigestRefusals',
  'GateRefusals',
  'SealedStateRejections',
  'StartRefusals',
  'Approvals',
  'RunsWaiting',
  'OldestWaitingRunAge',
] as const;

export type ApplicationMetricName = (typeof APPLICATION_METRICS)[number];

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
}

/**
 * What an on-call engineer needs: one dashboard with countersign's own metrics beside the
 * state machine's, the Lambdas', DynamoDB's and the API's, and alarms on an SNS topic, each
 * explained in docs/runbook.md. A scheduled probe measures how long runs wait, because
 * nothing runs while a run waits.
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
  /** Every alarm, by the name the runbook uses. */
  public readonly alarms: Readonly<Record<CountersignAlarmName, Alarm>>;
  /** The probe schedule's undelivered events (encrypted, TLS only); `ProbeDeadLetters` alarms on it. */
  public readonly probeDeadLetterQueue: Queue;

  private readonly serviceName: string;
  private readonly runbookUrl: string;

  public constructor(scope: Construct, id: string, props: CountersignObservabilityProps) {
    super(scope, id);
    this.serviceName = props.serviceName;
    this.runbookUrl = props.runbookUrl;
    const thresholds = resolveThresholds(this, props.alarmThresholds);
    this.alarmTopic = props.alarmTopic ?? this.createAlarmTopic(props.removalPolicy);

    this.probeDeadLetterQueue = this.createProbeDeadLetterQueue(props.removalPolicy);
    new Rule(this, 'WaitingRunsProbeSchedule', {
      description: 'countersign: measure how long runs wait for a decision',
      schedule: Schedule.rate(WAITING_RUNS_PROBE_INTERVAL),
      targets: [
        new LambdaFunction(props.functions['report-waiting-runs'], {
          // A throttled or failed delivery is tried again while the measurement is still current,
          // then kept in the dead-letter queue (and ProbeDeadLetters alarms) instead of vanishing.
          retryAttempts: PROBE_DELIVERY_RETRY_ATTEMPTS,
          maxEventAge: WAITING_RUNS_PROBE_INTERVAL,
          deadLetterQueue: this.probeDeadLetterQueue,
        }),
      ],
    });

    const stepFunctions = STEP_HANDLERS.map((name) => props.functions[name]);
    const apiFunctions = API_HANDLERS.map((name) => props.functions[name]);
    const sumOf = (label: string, metrics: IMetric[]): MathExpression => {
      if (metrics.length > MAXIMUM_ALARM_METRICS) {
        throw new Error(
          `CountersignObservability: "${label}" would read ${metrics.length} metrics; a CloudWatch alarm reads at most ${MAXIMUM_ALARM_METRICS}. Split the handler group in lib/observability.ts.`,
        );
      }
      return new MathExpression({
        label,
        expression: metrics.map((_, index) => `m${index}`).join(' + '),
        usingMetrics: Object.fromEntries(metrics.map((metric, index) => [`m${index}`, metric])),
        period: Duration.minutes(5),
      });
    };

    const previewFailurePercent = new MathExpression({
      label: 'Preview failure rate (%)',
      expression: 'IF(captured > 0, 100 * failed / captured, 0)',
      usingMetrics: {
        captured: this.metric('PreviewsCaptured', { period: Duration.minutes(15) }),
        failed: this.metric('PreviewsFailed', { period: Duration.minutes(15) }),
      },
      period: Duration.minutes(15),
    });
    const largestSealed = new MathExpression({
      label: 'Largest sealed write (bytes)',
      expression: 'MAX([state, card])',
      usingMetrics: {
        state: this.metric('SealedStateBytes', { statistic: 'Maximum' }),
        card: this.metric('SealedCardBytes', { statistic: 'Maximum' }),
      },
      period: Duration.minutes(5),
    });

    const firstOccurrence = (alarmId: string, metric: IMetric, description: string): Alarm =>
      this.createAlarm(alarmId, metric, {
        threshold: ALARM_ON_FIRST_OCCURRENCE,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        description,
      });
    const alarms = {
      ExecutionsFailed: firstOccurrence(
        'ExecutionsFailed',
        props.stateMachine.metricFailed({ period: Duration.minutes(5) }),
        'A run execution failed outside the run (MarkFailed itself failed, or a definition error).',
      ),
      ExecutionsTimedOut: firstOccurrence(
        'ExecutionsTimedOut',
        props.stateMachine.metricTimedOut({ period: Duration.minutes(5) }),
        'A run execution timed out as a whole.',
      ),
      ExecutionsThrottled: firstOccurrence(
        'ExecutionsThrottled',
        props.stateMachine.metricThrottled({ period: Duration.minutes(5) }),
        'Step Functions throttled state transitions or StartExecution.',
      ),
      StepLambdaErrors: firstOccurrence(
        'StepLambdaErrors',
        sumOf(
          'Step Lambda errors',
          stepFunctions.map((fn) => fn.metricErrors()),
        ),
        'A state machine step or the waiting-runs probe threw or timed out.',
      ),
      StepLambdaThrottles: firstOccurrence(
        'StepLambdaThrottles',
        sumOf(
          'Step Lambda throttles',
          stepFunctions.map((fn) => fn.metricThrottles()),
        ),
        'Lambda throttled a state machine step or the probe.',
      ),
      ApiLambdaErrors: firstOccurrence(
        'ApiLambdaErrors',
        sumOf(
          'API Lambda errors',
          apiFunctions.map((fn) => fn.metricErrors()),
        ),
        'An API Lambda crashed or timed out (an error response is not a Lambda error).',
      ),
      ApiLambdaThrottles: firstOccurrence(
        'ApiLambdaThrottles',
        sumOf(
          'API Lambda throttles',
          apiFunctions.map((fn) => fn.metricThrottles()),
        ),
        'Lambda throttled an API Lambda.',
      ),
      DynamoDbThrottles: firstOccurrence(
        'DynamoDbThrottles',
        props.table.metricThrottledRequestsForOperations({
          operations: TABLE_OPERATIONS,
          period: Duration.minutes(5),
        }),
        'DynamoDB throttled requests to the countersign table.',
      ),
      DynamoDbSystemErrors: firstOccurrence(
        'DynamoDbSystemErrors',
        props.table.metricSystemErrorsForOperations({
          operations: TABLE_OPERATIONS,
          period: Duration.minutes(5),
        }),
        'DynamoDB answered requests to the countersign table with a 500.',
      ),
      Api5xx: firstOccurrence(
        'Api5xx',
        props.httpApi.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }),
        'The HTTP API answered 5XX.',
      ),
      ApiLatencyP99: this.createAlarm(
        'ApiLatencyP99',
        props.httpApi.metricLatency({ period: Duration.minutes(5), statistic: 'p99' }),
        {
          threshold: thresholds.apiLatencyP99.toMilliseconds(),
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 3,
          description: `The HTTP API's p99 latency stayed above ${thresholds.apiLatencyP99.toHumanString()} for 15 minutes.`,
        },
      ),
      PreviewFailureRate: this.createAlarm('PreviewFailureRate', previewFailurePercent, {
        threshold: thresholds.previewFailurePercent,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        description: `More than ${thresholds.previewFailurePercent} % of the previews captured in 15 minutes failed.`,
      }),
      SkillChecksumMismatch: firstOccurrence(
        'SkillChecksumMismatch',
        this.metric('SkillChecksumMismatches', { period: Duration.minutes(5) }),
        'A stored skill body no longer matches its reviewed checksum; it was skipped.',
      ),
      SealedStateNearItemLimit: this.createAlarm('SealedStateNearItemLimit', largestSealed, {
        threshold: thresholds.sealedBytes,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        description: `A sealed run state or approval card of ${thresholds.sealedBytes} bytes or more was written (DynamoDB items stop at 400 KB).`,
      }),
      SealedStateRejected: firstOccurrence(
        'SealedStateRejected',
        this.metric('SealedStateRejections', { period: Duration.minutes(5) }),
        'A sealed run state, approval card or task token was refused (tampered, or copied from another run); its run was ended.',
      ),
      RunWaitingTooLong: this.createAlarm(
        'RunWaitingTooLong',
        this.metric('OldestWaitingRunAge', { statistic: 'Maximum', period: WAITING_RUNS_PROBE_INTERVAL }),
        {
          threshold: thresholds.runWaitingLongerThan.toMilliseconds(),
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          description: `A run has waited for a decision longer than ${thresholds.runWaitingLongerThan.toHumanString()}.`,
        },
      ),
      ProbeDeadLetters: firstOccurrence(
        'ProbeDeadLetters',
        this.probeDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(5),
          statistic: 'Maximum',
        }),
        'EventBridge could not deliver the waiting-runs probe; the undelivered events are in its dead-letter queue.',
      ),
    } satisfies Record<CountersignAlarmName, Alarm>;
    this.alarms = alarms;

    if (props.dashboard === false) return;
    this.dashboard = new Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(6),
      widgets: [
        [
          new TextWidget({
            markdown: `# countersign\nRuns, approvals and what they cost. Each alarm is explained in the [runbook](${props.runbookUrl}).`,
            width: 24,
            height: 2,
          }),
        ],
        [new AlarmStatusWidget({ title: 'Alarms', alarms: Object.values(alarms), width: 24, height: 4 })],
        [
          this.graph('Runs', [
            'RunsStarted',
            'RunsCompleted',
            'RunsFailed',
            'RunsExpired',
            'RunsCancelled',
            'RunsSuspended',
          ]),
          this.graph(
            'Decisions',
            // Approvals: each k-of-n approval recorded (short of K or the K-th).
            ['Approvals'],
            [
              this.metric('Decisions', { dimensions: { outcome: 'approve' }, label: 'approve' }),
              this.metric('Decisions', { dimensions: { outcome: 'reject' }, label: 'reject' }),
            ],
          ),
          this.graph(
            'Time from pause to decision',
            [],
            [
              this.metric('PauseToDecision', { statistic: 'p50', label: 'p50' }),
              this.metric('PauseToDecision', { statistic: 'p90', label: 'p90' }),
              this.metric('PauseToDecision', { statistic: 'Maximum', label: 'max' }),
            ],
          ),
          this.graph(
            'Waiting runs',
            [],
            [
              this.metric('RunsWaiting', { statistic: 'Maximum', label: 'waiting' }),
              this.metric('OldestWaitingRunAge', { statistic: 'Maximum', label: 'oldest wait (ms)' }),
            ],
          ),
        ],
        [
          this.graph('Previews', ['PreviewsCaptured', 'PreviewsFailed', 'PreviewsWithheld']),
          this.graph('Skills', ['SkillsDropped', 'SkillChecksumMismatches']),
          this.graph(
            'Sealed sizes (bytes)',
            [],
            [
              this.metric('SealedStateBytes', { statistic: 'Maximum', label: 'run state max' }),
              this.metric('SealedStateBytes', { statistic: 'p90', label: 'run state p90' }),
              this.metric('SealedCardBytes', { statistic: 'Maximum', label: 'card max' }),
            ],
          ),
          this.graph(
            'Refusals',
            ['StaleDigestRefusals', 'SealedStateRejections', 'StartRefusals'],
            [
              this.metric('GateRefusals', { dimensions: { gate: 'tool' }, label: 'gate: tool' }),
              this.metric('GateRefusals', { dimensions: { gate: 'four-eyes' }, label: 'gate: four-eyes' }),
              this.metric('GateRefusals', { dimensions: { gate: 'record' }, label: 'gate: record' }),
            ],
          ),
        ],
        [
          new GraphWidget({
            title: 'State machine executions',
            width: 12,
            left: [
              props.stateMachine.metricStarted(),
              props.stateMachine.metricSucceeded(),
              props.stateMachine.metricFailed(),
              props.stateMachine.metricTimedOut(),
              props.stateMachine.metricAborted(),
              props.stateMachine.metricThrottled(),
            ],
          }),
          new GraphWidget({
            title: 'Execution time',
            width: 12,
            left: [props.stateMachine.metricTime({ statistic: 'p90' })],
          }),
        ],
        [
          new GraphWidget({
            title: 'Lambda errors and throttles',
            width: 12,
            left: Object.entries(props.functions).map(([name, fn]) => fn.metricErrors({ label: name })),
            right: Object.entries(props.functions).map(([name, fn]) =>
              fn.metricThrottles({ label: `${name} throttles` }),
            ),
          }),
          new GraphWidget({
            title: 'Lambda duration p99',
            width: 12,
            left: Object.entries(props.functions).map(([name, fn]) =>
              fn.metricDuration({ statistic: 'p99', label: name }),
            ),
          }),
        ],
        [
          new GraphWidget({
            title: 'DynamoDB capacity',
            width: 8,
            left: [
              props.table.metricConsumedReadCapacityUnits(),
              props.table.metricConsumedWriteCapacityUnits(),
            ],
          }),
          // Two widgets: both math expressions name their metrics after the same operations.
          new GraphWidget({ title: 'DynamoDB throttles', width: 4, left: [alarms.DynamoDbThrottles.metric] }),
          new GraphWidget({
            title: 'DynamoDB system errors',
            width: 4,
            left: [alarms.DynamoDbSystemErrors.metric],
          }),
          new GraphWidget({
            title: 'DynamoDB latency',
            width: 8,
            left: [Operation.GET_ITEM, Operation.PUT_ITEM, Operation.QUERY].map((operation) =>
              props.table.metricSuccessfulRequestLatency({ dimensionsMap: { Operation: operation } }),
            ),
          }),
        ],
        [
          new GraphWidget({
            title: 'API requests',
            width: 12,
            left: [
              props.httpApi.metricCount(),
              props.httpApi.metricClientError(),
              props.httpApi.metricServerError(),
            ],
          }),
          new GraphWidget({
            title: 'API latency',
            width: 12,
            left: [
              props.httpApi.metricLatency({ statistic: 'p50', label: 'p50' }),
              props.httpApi.metricLatency({ statistic: 'p99', label: 'p99' }),
              props.httpApi.metricIntegrationLatency({ statistic: 'p99', label: 'integration p99' }),
            ],
          }),
        ],
      ],
    });
  }

  /** One of countersign's own metrics, with this deployment's `service` dimension. */
  public metric(
    name: ApplicationMetricName,
    options: {
      dimensions?: Record<string, string>;
      statistic?: string;
      period?: Duration;
      label?: string;
    } = {},
  ): Metric {
    return new Metric({
      namespace: COUNTERSIGN_METRICS_NAMESPACE,
      metricName: name,
      dimensionsMap: { service: this.serviceName, ...options.dimensions },
      statistic: options.statistic ?? 'Sum',
      period: options.period ?? Duration.minutes(5),
      ...(options.label === undefined ? {} : { label: options.label }),
    });
  }

  private graph(title: string, names: ApplicationMetricName[], extra: IMetric[] = []): GraphWidget {
    return new GraphWidget({
      title,
      width: 6,
      left: [...names.map((name) => this.metric(name, { label: name })), ...extra],
    });
  }

  private createAlarm(
    id: string,
    metric: IMetric,
    options: {
      threshold: number;
      comparisonOperator: ComparisonOperator;
      evaluationPeriods: number;
      description: string;
    },
  ): Alarm {
    const alarm = new Alarm(this, id, {
      metric,
      ...options,
      alarmDescription: `${options.description} Runbook: ${this.runbookUrl}#${id.toLowerCase()}`,
      // No data means nothing happened: no failure, no run, no request.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(this.alarmTopic));
    alarm.addOkAction(new SnsAction(this.alarmTopic));
    return alarm;
  }

  private createProbeDeadLetterQueue(removalPolicy: RemovalPolicy): Queue {
    const queue = new Queue(this, 'WaitingRunsProbeDeadLetterQueue', {
      // SQS managed encryption: EventBridge may send to it without a key policy of its own.
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    Validations.of(queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is the dead-letter queue of the waiting-runs probe schedule (an EventBridge target), not a work queue: a dead-letter queue of its own would only move the same events once more.',
    });
    return queue;
  }

  private createAlarmTopic(removalPolicy: RemovalPolicy): ITopic {
    // Its own key: CloudWatch must be allowed to use it, which the sealing key must never allow.
    const key = new Key(this, 'AlarmTopicKey', {
      description: 'countersign: encrypts the alarm topic',
      enableKeyRotation: true,
      removalPolicy,
    });
    key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    return new Topic(this, 'AlarmTopic', {
      displayName: 'countersign alarms',
      masterKey: key,
      enforceSSL: true,
    });
  }
}

// API handlers by name, every other one (steps, probe) apart: each group's math stays within the
// 10 metrics an alarm may read, and a handler added later is covered without an edit here.
const API_HANDLERS: readonly HandlerName[] = HANDLER_NAMES.filter((name) => name.startsWith('api-'));
const STEP_HANDLERS: readonly HandlerName[] = HANDLER_NAMES.filter((name) => !name.startsWith('api-'));

function resolveThresholds(
  scope: IConstruct,
  thresholds: CountersignAlarmThresholds = {},
): Required<CountersignAlarmThresholds> {
  const resolved = { ...ALARM_THRESHOLD_DEFAULTS, ...withoutUndefined(thresholds) };
  if (resolved.runWaitingLongerThan.toSeconds() < WAITING_RUNS_PROBE_INTERVAL.toSeconds()) {
    throw invalidProp(
      scope,
      `alarmThresholds.runWaitingLongerThan ${resolved.runWaitingLongerThan.toHumanString()} is shorter than the probe interval; use at least ${WAITING_RUNS_PROBE_INTERVAL.toHumanString()}.`,
    );
  }
  const percent = resolved.previewFailurePercent;
  if (!Number.isFinite(percent) || percent < 0 || percent >= 100) {
    throw invalidProp(
      scope,
      `alarmThresholds.previewFailurePercent ${JSON.stringify(percent)} is invalid; use a percentage from 0 to below 100 (default ${ALARM_THRESHOLD_DEFAULTS.previewFailurePercent}).`,
    );
  }
  if (!Number.isInteger(resolved.sealedBytes) || resolved.sealedBytes < 1 || resolved.sealedBytes > 400_000) {
    throw invalidProp(
      scope,
      `alarmThresholds.sealedBytes ${JSON.stringify(resolved.sealedBytes)} is invalid; use whole bytes from 1 to 400000 (default ${ALARM_THRESHOLD_DEFAULTS.sealedBytes}).`,
    );
  }
  return resolved;
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
