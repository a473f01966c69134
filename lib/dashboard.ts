import { Duration } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  type Alarm,
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import { type ITable, Operation } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { QUICK_APPROVAL_SECONDS } from '../lambdas/core/analytics/record-approver-response.js';
import { APPROVE_GATES } from '../lambdas/core/approvals/decision-gate.js';
import {
  COUNTERSIGN_METRICS_NAMESPACE,
  METRIC_GROUPS,
  type MetricName,
} from '../lambdas/core/metric-names.js';
import { QUOTA_NAMES } from '../lambdas/core/quotas/principal-quotas.js';
import type { CountersignAlarmName } from './alarms.js';
import type { ApplicationMetricReader } from './application-metrics.js';
import type { HandlerName } from './handler-names.js';
import { createSpendWidgets, STATE_TRANSITIONS_PER_STEP_INVOCATION } from './spend-estimate.js';

/** What {@link createCountersignDashboard} shows. */
export interface CountersignDashboardProps {
  readonly functions: Readonly<Record<HandlerName, IFunction>>;
  readonly stateMachine: IStateMachine;
  readonly table: ITable;
  readonly httpApi: IHttpApi;
  readonly alarms: Readonly<Record<CountersignAlarmName, Alarm>>;
  /** The `service` dimension of countersign's own metrics. */
  readonly serviceName: string;
  readonly runbookUrl: string;
  readonly metric: ApplicationMetricReader;
  /** The handlers the state machine invokes: their invocations estimate its state transitions. */
  readonly stepHandlers: readonly HandlerName[];
}

/**
 * One dashboard with every one of countersign's own metrics (`METRIC_NAMES`) beside the state
 * machine's, the Lambdas', DynamoDB's and the API's, under the alarms' status.
 *
 * @example
 * const dashboard = createCountersignDashboard(this, { functions, stateMachine, table, httpApi, alarms, ... });
 */
export function createCountersignDashboard(scope: Construct, props: CountersignDashboardProps): Dashboard {
  const { metric, stateMachine, table, httpApi, alarms } = props;
  const handlers = Object.entries(props.functions);
  const graph = (title: string, names: readonly MetricName[], extra: IMetric[] = []): GraphWidget =>
    graphOf(title, 6, [...names.map((name) => metric(name, { label: name })), ...extra]);
  // One line per value of a dimension: `gate: tool`, `gate: record`.
  const byDimension = (
    name: MetricName,
    dimension: string,
    values: readonly string[],
    labelPrefix = '',
  ): IMetric[] =>
    values.map((value) =>
      metric(name, { dimensions: { [dimension]: value }, label: `${labelPrefix}${dimension}: ${value}` }),
    );
  // One line per statistic of a metric, by the label each is shown with.
  const byStatistic = (name: MetricName, labels: Readonly<Record<string, string>>): IMetric[] =>
    Object.entries(labels).map(([statistic, label]) => metric(name, { statistic, label }));
  return new Dashboard(scope, 'Dashboard', {
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
        graph('Runs', METRIC_GROUPS.runs),
        graph(
          'Decisions',
          ['Approvals', 'CardsEscalated', ...METRIC_GROUPS.delivery],
          byDimension('Decisions', 'outcome', ['approve', 'reject']),
        ),
        graph(
          'Time from pause to decision',
          [],
          byStatistic('PauseToDecision', { p50: 'p50', p90: 'p90', Maximum: 'max' }),
        ),
        graph(
          'Waiting runs',
          [],
          [
            ...byStatistic('RunsWaiting', { Maximum: 'waiting' }),
            ...byStatistic('OldestWaitingRunAge', { Maximum: 'oldest wait (ms)' }),
          ],
        ),
      ],
      [
        graph('Previews', METRIC_GROUPS.previews),
        graph('Skills and model context', METRIC_GROUPS.skills),
        graph(
          'Sealed sizes (bytes)',
          [],
          [
            ...byStatistic('SealedStateBytes', { Maximum: 'run state max', p90: 'run state p90' }),
            ...byStatistic('SealedCardBytes', { Maximum: 'card max' }),
          ],
        ),
        graph(
          'Refusals',
          ['StaleDigestRefusals', 'SealedStateRejections', 'StartRefusals'],
          [
            ...byDimension('GateRefusals', 'gate', APPROVE_GATES),
            ...byDimension('QuotaRefusals', 'quota', QUOTA_NAMES),
          ],
        ),
      ],
      // Tool calls carry the tool's name as a dimension: a search finds every tool there is.
      [
        graphOf('Tool calls by tool and outcome', 18, [
          searchByDimensions(props.serviceName, 'ToolCalls', ['outcome', 'tool']),
        ]),
        graph(
          'Agents that run elsewhere',
          ['ExternalRunsSubmitted', 'WebhookDeliveries', 'ExecutionsWithoutApproval'],
          [
            ...byDimension('ExternalRunsAnswered', 'outcome', ['approve', 'reject', 'expired']),
            ...byDimension('WebhookDeliveryFailures', 'reason', ['retried', 'status', 'url', 'no-secret']),
          ],
        ),
      ],
      [
        graphOf('Channel deliveries', 8, [
          ...byDimension('ChannelDeliveries', 'channel', ['slack', 'email'], 'delivered, '),
          ...byDimension('ChannelDeliveryFailures', 'channel', ['slack', 'email'], 'failed, '),
        ]),
        graphOf('Card Closed events not put', 8, [
          metric('CardEventFailures', { label: 'CardEventFailures' }),
        ]),
        graphOf('Slack requests refused, by reason', 8, [
          searchByDimensions(props.serviceName, 'SlackInteractionRefusals', ['reason']),
        ]),
      ],
      // Approver groups are data: a search finds every group that answered (docs/runbook.md).
      [
        new TextWidget({
          markdown: `## Approvers\nPer approver group: how long after a card appears it is answered, how many approvals come within ${QUICK_APPROVAL_SECONDS} s, how many answers are rejections, how many are edits. Signals of rubber-stamping are explained in the [runbook](${props.runbookUrl}#approver-analytics); per approver, see GET /admin/approver-analytics.`,
          width: 24,
          height: 2,
        }),
      ],
      [
        graphOf('Time from card to answer, p50 (ms)', 8, [
          searchByApproverGroup(props.serviceName, 'ApproverResponseTime', 'p50'),
        ]),
        graphOf(`Share of approvals within ${QUICK_APPROVAL_SECONDS} s`, 8, [
          searchByApproverGroup(props.serviceName, 'QuickApprovals', 'Average'),
        ]),
        graphOf('Share of answers that reject', 4, [
          searchByApproverGroup(props.serviceName, 'ApproverRejects', 'Average'),
        ]),
        graphOf('Share of answers that edit', 4, [
          searchByApproverGroup(props.serviceName, 'ApproverEdits', 'Average'),
        ]),
      ],
      [
        new TextWidget({
          markdown: `## Spend and model health (an estimate)\nModel cost from \`modelPrices\`, Lambda from GB-seconds and requests, Step Functions from ${STATE_TRANSITIONS_PER_STEP_INVOCATION} transitions per step invocation, at us-east-1 list prices ([runbook](${props.runbookUrl}#spend-and-model-health)).`,
          width: 24,
          height: 2,
        }),
      ],
      createSpendWidgets({ ...props, stepHandlers: props.stepHandlers }),
      [
        graphOf('State machine executions', 12, [
          stateMachine.metricStarted(),
          stateMachine.metricSucceeded(),
          stateMachine.metricFailed(),
          stateMachine.metricTimedOut(),
          stateMachine.metricAborted(),
          stateMachine.metricThrottled(),
        ]),
        graphOf('Execution time', 12, [stateMachine.metricTime({ statistic: 'p90' })]),
      ],
      [
        new GraphWidget({
          title: 'Lambda errors and throttles',
          width: 12,
          left: handlers.map(([name, handler]) => handler.metricErrors({ label: name })),
          right: handlers.map(([name, handler]) => handler.metricThrottles({ label: `${name} throttles` })),
        }),
        graphOf(
          'Lambda duration p99',
          12,
          handlers.map(([name, handler]) => handler.metricDuration({ statistic: 'p99', label: name })),
        ),
      ],
      [
        graphOf('DynamoDB capacity', 8, [
          table.metricConsumedReadCapacityUnits(),
          table.metricConsumedWriteCapacityUnits(),
        ]),
        // Two widgets: both math expressions name their metrics after the same operations.
        graphOf('DynamoDB throttles', 4, [alarms.DynamoDbThrottles.metric]),
        graphOf('DynamoDB system errors', 4, [alarms.DynamoDbSystemErrors.metric]),
        graphOf(
          'DynamoDB latency',
          8,
          [Operation.GET_ITEM, Operation.PUT_ITEM, Operation.QUERY].map((operation) =>
            table.metricSuccessfulRequestLatency({ dimensionsMap: { Operation: operation } }),
          ),
        ),
      ],
      [
        graphOf('API requests', 12, [
          httpApi.metricCount(),
          httpApi.metricClientError(),
          httpApi.metricServerError(),
        ]),
        graphOf('API latency', 12, [
          httpApi.metricLatency({ statistic: 'p50', label: 'p50' }),
          httpApi.metricLatency({ statistic: 'p99', label: 'p99' }),
          httpApi.metricIntegrationLatency({ statistic: 'p99', label: 'integration p99' }),
        ]),
      ],
    ],
  });
}

function graphOf(title: string, width: number, left: IMetric[]): GraphWidget {
  return new GraphWidget({ title, width, left });
}

/**
 * A metric of one deployment with one line per value of its `dimensions` (every tool there is,
 * every reason a request was refused), found by a search: the values are data, not a list here.
 */
function searchByDimensions(
  serviceName: string,
  metricName: MetricName,
  dimensions: readonly string[],
): MathExpression {
  const schema = [COUNTERSIGN_METRICS_NAMESPACE, ...[...dimensions, 'service'].sort()].join(',');
  return new MathExpression({
    label: metricName,
    expression: `SEARCH('{${schema}} MetricName="${metricName}" service="${serviceName}"', 'Sum', 300)`,
    usingMetrics: {},
    period: Duration.minutes(5),
  });
}

/**
 * One line per approver group of an approver metric (`approverGroup`), over an hour: the flags
 * `QuickApprovals`, `ApproverRejects` and `ApproverEdits` are 0 or 1, so their average is a share.
 */
function searchByApproverGroup(
  serviceName: string,
  metricName: MetricName,
  statistic: string,
): MathExpression {
  return new MathExpression({
    label: metricName,
    expression: `SEARCH('{${COUNTERSIGN_METRICS_NAMESPACE},approverGroup,service} MetricName="${metricName}" service="${serviceName}"', '${statistic}', 3600)`,
    usingMetrics: {},
    period: Duration.hours(1),
  });
}
